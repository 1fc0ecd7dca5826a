package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"quarry/internal/fault"
)

// Setting returns the value of a server setting, or an ENotFound error when
// it was never set, so callers can tell "absent" from "empty".
func (s *Store) Setting(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := s.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fault.Errorf(fault.ENotFound, "no setting %q", key)
	}
	if err != nil {
		return nil, fmt.Errorf("store: setting %s: %w", key, err)
	}
	return v, nil
}

// SettingOrInit returns the stored value of key, storing init first when the
// key is absent. It is one transaction, so two processes starting on one
// database at once agree on a single value (e.g. the session key).
func (s *Store) SettingOrInit(ctx context.Context, key string, init []byte) ([]byte, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, init); err != nil {
		return nil, fmt.Errorf("store: init setting %s: %w", key, err)
	}
	var v []byte
	if err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v); err != nil {
		return nil, fmt.Errorf("store: setting %s: %w", key, err)
	}
	return v, tx.Commit()
}
