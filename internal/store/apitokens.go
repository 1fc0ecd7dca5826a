package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
)

// APIToken is a named secret an account's scripts send instead of a
// session. The store keeps the token's hash, and Prefix, its first
// characters, so a person can tell their tokens apart.
type APIToken struct {
	ID, AccountID, Name, Prefix string
	CreatedAt                   time.Time
	// LastUsedAt is at most a minute behind the token's last use (zero:
	// never used); RevokedAt is zero while it works.
	LastUsedAt, RevokedAt time.Time
}

// CreateAPIToken stores token t under the hash of its secret; CreatedAt
// defaults to s.Now(). An unknown account is fault.ENotFound.
func (s *Store) CreateAPIToken(ctx context.Context, t APIToken, tokenHash string) error {
	fe := fault.FieldErrors{}
	if t.ID == "" || tokenHash == "" || t.AccountID == "" {
		fe.Add("token", "a token needs an ID, its hash and an account")
	}
	if t.Name == "" {
		fe.Add("name", "a token needs a name")
	}
	if err := fe.Err("the token is incomplete"); err != nil {
		return err
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = s.Now()
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO api_tokens (id, account_id, name, token_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.AccountID, t.Name, tokenHash, t.Prefix, formatTime(t.CreatedAt))
	switch {
	case foreignKeyViolation(err):
		return fault.Errorf(fault.ENotFound, "no account %q", t.AccountID)
	case uniqueViolation(err, "api_tokens."):
		return fault.Errorf(fault.EConflict, "this token exists already")
	case err != nil:
		return fmt.Errorf("store: create API token: %w", err)
	}
	return nil
}

// APITokens lists the account's tokens, revoked ones too, newest first.
func (s *Store) APITokens(ctx context.Context, accountID string) ([]APIToken, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, prefix, created_at, last_used_at, revoked_at
		FROM api_tokens WHERE account_id = ? ORDER BY created_at DESC, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: API tokens: %w", err)
	}
	defer rows.Close()
	out := []APIToken{}
	for rows.Next() {
		t := APIToken{AccountID: accountID}
		var created, used, revoked string
		if err := rows.Scan(&t.ID, &t.Name, &t.Prefix, &created, &used, &revoked); err != nil {
			return nil, fmt.Errorf("store: API tokens: %w", err)
		}
		t.CreatedAt, t.LastUsedAt, t.RevokedAt = parseTime(created), optionalTime(used), optionalTime(revoked)
		out = append(out, t)
	}
	return out, rows.Err()
}

// optionalTime reads a time stored as empty text ("not yet") as the zero time.
func optionalTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	return parseTime(s)
}

// RevokeAPIToken stops the account's token id from working; a token that
// is not the account's is fault.ENotFound, one revoked already no error.
func (s *Store) RevokeAPIToken(ctx context.Context, accountID, id string) error {
	return s.revoke(ctx, `api_tokens`, `account_id`, accountID, id, "token")
}

// revoke sets revoked_at on the row id of table whose owner column is
// owner (kept when it was revoked already), in one statement; no such row
// is fault.ENotFound naming what (a token, a share link). table and
// column are this package's constants, never input.
func (s *Store) revoke(ctx context.Context, table, column, owner, id, what string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE `+table+` SET revoked_at = CASE WHEN revoked_at = '' THEN ? ELSE revoked_at END
		WHERE id = ? AND `+column+` = ?`, formatTime(s.Now()), id, owner)
	if err != nil {
		return fmt.Errorf("store: revoke %s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: revoke %s: %w", what, err)
	} else if n == 0 {
		return fault.Errorf(fault.ENotFound, "no %s %q", what, id)
	}
	return nil
}

// APITokenAccount returns the account of a live token (not revoked, its
// account not disabled), else fault.EUnauthenticated. It moves the
// token's last_used_at forward at most once a minute.
func (s *Store) APITokenAccount(ctx context.Context, tokenHash string, now time.Time) (Account, error) {
	var id, used, revoked string
	a, err := scanAccount(s.read.QueryRowContext(ctx, `SELECT `+accountColumns+`, t.id, t.last_used_at, t.revoked_at
		FROM api_tokens t JOIN accounts a ON a.id = t.account_id WHERE t.token_hash = ?`, tokenHash), &id, &used, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, fault.Errorf(fault.EUnauthenticated, "this API token is not valid")
	}
	if err != nil {
		return Account{}, fmt.Errorf("store: API token: %w", err)
	}
	if revoked != "" || a.Disabled {
		return Account{}, fault.Errorf(fault.EUnauthenticated, "this API token was revoked, or its account disabled")
	}
	if used == "" || now.Sub(parseTime(used)) > seenEvery {
		if _, err := s.write.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND last_used_at = ?`,
			formatTime(now), id, used); err != nil {
			return Account{}, fmt.Errorf("store: API token used: %w", err)
		}
	}
	return a, nil
}
