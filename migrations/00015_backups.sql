-- +goose Up
-- Backups are taken on request (quarry backup), before bulk imports and
-- restores as well as before migrations: each says why, for which run if
-- any, and how large it is, so retention can keep the last N.
ALTER TABLE backups ADD COLUMN reason TEXT NOT NULL DEFAULT 'migration';
ALTER TABLE backups ADD COLUMN run_id TEXT;
ALTER TABLE backups ADD COLUMN size INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE backups DROP COLUMN size;
ALTER TABLE backups DROP COLUMN run_id;
ALTER TABLE backups DROP COLUMN reason;
