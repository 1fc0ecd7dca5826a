-- Team accounts. An installation has accounts (a password, a single
-- sign-on identity, or both), signed-in sessions and API tokens; runs
-- belong to projects, whose members have a role each. Invitations (and
-- password resets) and share links are sent as secrets: only their
-- SHA-256 is kept (token_hash, id_hash), so a copy of the database signs
-- no one in. audit_log records who did what, installation-wide and per
-- project. Times are the store's RFC 3339 text; '' means "not yet"
-- (disabled_at, used_at, revoked_at, last_used_at).

-- +goose Up
CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,          -- normalised by the caller
    name          TEXT NOT NULL,
    password_hash TEXT NOT NULL DEFAULT '',      -- '' for single-sign-on-only accounts
    admin         INTEGER NOT NULL DEFAULT 0,
    oidc_issuer   TEXT NOT NULL DEFAULT '',
    oidc_subject  TEXT NOT NULL DEFAULT '',
    disabled_at   TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL
);
-- One account per single-sign-on identity.
CREATE UNIQUE INDEX accounts_oidc ON accounts (oidc_issuer, oidc_subject) WHERE oidc_subject <> '';
-- Decisions, marks and votes record who made them by display name, so
-- no two accounts share one (ignoring case).
CREATE UNIQUE INDEX accounts_name ON accounts (name COLLATE NOCASE);

CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,                 -- SHA-256 of the cookie's session ID
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    seen_at    TEXT NOT NULL,                    -- moved forward at most once a minute
    expires_at TEXT NOT NULL,
    address    TEXT NOT NULL DEFAULT '',
    agent      TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX sessions_account ON sessions (account_id);

-- Failed sign-ins by key (an email, an address), for rate limiting; rows
-- older than a day are deleted as new ones come.
CREATE TABLE login_failures (
    key TEXT NOT NULL,
    at  TEXT NOT NULL
);
CREATE INDEX login_failures_key ON login_failures (key, at);

CREATE TABLE projects (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);

CREATE TABLE project_members (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('owner','reviewer','viewer')),
    added_at   TEXT NOT NULL,
    PRIMARY KEY (project_id, account_id)
) WITHOUT ROWID;

-- A run's project ('' for none: runs from before accounts, until the
-- first admin's project takes them). Not a foreign key: SQLite cannot add
-- one to an existing table. The column comes after the run's state, so
-- runs_id_project answers "which project is run X in" (every request's
-- access check) without walking the state's overflow pages, as
-- runs_id_version does for the run stamp (00009).
ALTER TABLE runs ADD COLUMN project_id TEXT NOT NULL DEFAULT '';
-- Who started the run ('' when nobody said): a gate may refuse them its
-- approval (no self-approval).
ALTER TABLE runs ADD COLUMN started_by TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_project ON runs (project_id, created_at);
CREATE INDEX runs_id_project ON runs (id, project_id);

-- Invitations to create an account (kind 'invite', optionally into a
-- project with a role) and password resets (kind 'reset', for account_id).
CREATE TABLE invitations (
    token_hash TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('invite','reset')),
    email      TEXT NOT NULL DEFAULT '',
    account_id TEXT NOT NULL DEFAULT '',
    project_id TEXT NOT NULL DEFAULT '',
    role       TEXT NOT NULL DEFAULT '',
    admin      INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,                  -- the token's first characters, to recognise it
    created_at   TEXT NOT NULL,
    last_used_at TEXT NOT NULL DEFAULT '',
    revoked_at   TEXT NOT NULL DEFAULT ''
);

-- Links that let a guest without an account see (or decide on) one run of
-- a project, or every run of it (run_id '').
CREATE TABLE share_links (
    id         TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    run_id     TEXT NOT NULL DEFAULT '',
    capability TEXT NOT NULL CHECK (capability IN ('view','decide')),
    guest_name TEXT NOT NULL DEFAULT '',
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT NOT NULL DEFAULT ''
);

-- AUTOINCREMENT: a seq is never reused, so pages "before seq" stay stable.
CREATE TABLE audit_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    actor_id   TEXT NOT NULL DEFAULT '',
    actor      TEXT NOT NULL DEFAULT '',         -- the actor's name as it was then
    action     TEXT NOT NULL,
    project_id TEXT NOT NULL DEFAULT '',
    target     TEXT NOT NULL DEFAULT '',
    address    TEXT NOT NULL DEFAULT '',
    detail     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_project ON audit_log (project_id, seq);

-- +goose Down
DROP INDEX audit_log_project;
DROP TABLE audit_log;
DROP TABLE share_links;
DROP TABLE api_tokens;
DROP TABLE invitations;
DROP INDEX runs_id_project;
DROP INDEX runs_project;
ALTER TABLE runs DROP COLUMN started_by;
ALTER TABLE runs DROP COLUMN project_id;
DROP TABLE project_members;
DROP TABLE projects;
DROP INDEX login_failures_key;
DROP TABLE login_failures;
DROP INDEX sessions_account;
DROP TABLE sessions;
DROP INDEX accounts_name;
DROP INDEX accounts_oidc;
DROP TABLE accounts;
