package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"quarry/internal/fault"
)

// Session is a signed-in browser. The store keeps only the hash of the
// session's ID (the cookie), so the database alone signs no one in.
type Session struct {
	AccountID string
	// Address and Agent are the client's IP address and User-Agent when
	// the session was created, for the account's list of sessions.
	Address, Agent               string
	CreatedAt, SeenAt, ExpiresAt time.Time
}

// SessionInfo is a session as its account's list shows it: enough of the
// hash to tell sessions apart and to delete one, never the whole of it.
type SessionInfo struct {
	IDHashPrefix string
	Session
}

// seenEvery is how stale a session's seen_at may grow before a request
// moves it: once a minute, not a write per request.
const seenEvery = time.Minute

// loginFailureKeep is how long failed sign-ins are kept for rate limiting.
const loginFailureKeep = 24 * time.Hour

// errSignIn is the answer for every session or token that signs no one
// in, whatever the reason: the caller must sign in again.
func errSignIn() error {
	return fault.Errorf(fault.EUnauthenticated, "your session has ended: sign in again")
}

// CreateSession stores a session under the hash of its ID. CreatedAt
// and SeenAt default to s.Now(); ExpiresAt is required.
func (s *Store) CreateSession(ctx context.Context, idHash string, sess Session) error {
	if idHash == "" || sess.AccountID == "" || sess.ExpiresAt.IsZero() {
		return fault.Errorf(fault.EInvalid, "a session needs its ID's hash, an account and an expiry")
	}
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = s.Now()
	}
	if sess.SeenAt.IsZero() {
		sess.SeenAt = sess.CreatedAt
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO sessions (id_hash, account_id, created_at, seen_at, expires_at, address, agent)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, idHash, sess.AccountID, formatTime(sess.CreatedAt), formatTime(sess.SeenAt),
		formatTime(sess.ExpiresAt), sess.Address, sess.Agent)
	switch {
	case foreignKeyViolation(err):
		return fault.Errorf(fault.ENotFound, "no account %q", sess.AccountID)
	case uniqueViolation(err, "sessions.id_hash"):
		return fault.Errorf(fault.EConflict, "this session exists already")
	case err != nil:
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// SessionAccount returns the account of a live session (not expired at
// now, its account not disabled), else fault.EUnauthenticated. It moves
// the session's seen_at forward only when it is more than a minute old,
// so a busy page costs no write per request.
func (s *Store) SessionAccount(ctx context.Context, idHash string, now time.Time) (Account, error) {
	var seen, expires string
	a, err := scanAccount(s.read.QueryRowContext(ctx, `SELECT `+accountColumns+`, s.seen_at, s.expires_at
		FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.id_hash = ?`, idHash), &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, errSignIn()
	}
	if err != nil {
		return Account{}, fmt.Errorf("store: session: %w", err)
	}
	if !now.Before(parseTime(expires)) || a.Disabled {
		return Account{}, errSignIn()
	}
	if now.Sub(parseTime(seen)) > seenEvery {
		// Compare-and-set on the old value: of two requests racing, one
		// writes.
		if _, err := s.write.ExecContext(ctx, `UPDATE sessions SET seen_at = ? WHERE id_hash = ? AND seen_at = ?`,
			formatTime(now), idHash, seen); err != nil {
			return Account{}, fmt.Errorf("store: session seen: %w", err)
		}
	}
	return a, nil
}

// DeleteSession ends one session (signing out); an unknown one is no
// error, so signing out twice is harmless.
func (s *Store) DeleteSession(ctx context.Context, idHash string) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, idHash); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// DeleteSessions ends every session of the account ("sign out
// everywhere") and says how many there were.
func (s *Store) DeleteSessions(ctx context.Context, accountID string) (int, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	n, err := deleteSessionsTx(ctx, tx, accountID)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: commit sessions: %w", err)
	}
	return n, nil
}

func deleteSessionsTx(ctx context.Context, tx *tx, accountID string) (int, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE account_id = ?`, accountID)
	if err != nil {
		return 0, fmt.Errorf("store: delete sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Sessions lists the account's sessions not expired at s.Now(), the most
// recently seen first.
func (s *Store) Sessions(ctx context.Context, accountID string) ([]SessionInfo, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT substr(id_hash, 1, 8), created_at, seen_at, expires_at, address, agent
		FROM sessions WHERE account_id = ?`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	defer rows.Close()
	now := s.Now()
	out := []SessionInfo{}
	for rows.Next() {
		si := SessionInfo{Session: Session{AccountID: accountID}}
		var created, seen, expires string
		if err := rows.Scan(&si.IDHashPrefix, &created, &seen, &expires, &si.Address, &si.Agent); err != nil {
			return nil, fmt.Errorf("store: sessions: %w", err)
		}
		si.CreatedAt, si.SeenAt, si.ExpiresAt = parseTime(created), parseTime(seen), parseTime(expires)
		if now.Before(si.ExpiresAt) {
			out = append(out, si)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return b.SeenAt.Compare(a.SeenAt) })
	return out, nil
}

// LoginFailures returns the failed sign-ins recorded under each key at or
// after since, oldest first; keys without any are absent from the map.
func (s *Store) LoginFailures(ctx context.Context, keys []string, since time.Time) (map[string][]time.Time, error) {
	out := map[string][]time.Time{}
	if len(keys) == 0 {
		return out, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("store: login failures: %w", err)
	}
	// The stored text orders as time only to the second ("…00Z" sorts
	// after "…00.5Z"), so SQL bounds the scan a second early and the exact
	// comparison is made on parsed times.
	rows, err := s.read.QueryContext(ctx, `SELECT key, at FROM login_failures
		WHERE key IN `+s.read.d.jsonTexts("?")+` AND at >= ? ORDER BY key, at`,
		string(list), formatTime(since.Add(-time.Second).Truncate(time.Second)))
	if err != nil {
		return nil, fmt.Errorf("store: login failures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, at string
		if err := rows.Scan(&key, &at); err != nil {
			return nil, fmt.Errorf("store: login failures: %w", err)
		}
		if t := parseTime(at); !t.Before(since) {
			out[key] = append(out[key], t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: login failures: %w", err)
	}
	for _, ts := range out {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return out, nil
}

// RecordLoginFailure records a failed sign-in at at under each key (the
// email tried, the client's address) and deletes failures older than a
// day, so the table holds only what rate limiting reads.
func (s *Store) RecordLoginFailure(ctx context.Context, keys []string, at time.Time) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT INTO login_failures (key, at) VALUES (?, ?)`, k, formatTime(at)); err != nil {
			return fmt.Errorf("store: record login failure: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE at < ?`, formatTime(at.Add(-loginFailureKeep))); err != nil {
		return fmt.Errorf("store: prune login failures: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit login failure: %w", err)
	}
	return nil
}

// ClearLoginFailures forgets the failures under key (after a successful
// sign-in).
func (s *Store) ClearLoginFailures(ctx context.Context, key string) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM login_failures WHERE key = ?`, key); err != nil {
		return fmt.Errorf("store: clear login failures: %w", err)
	}
	return nil
}
