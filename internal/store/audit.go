package store

import (
	"context"
	"fmt"
	"math"
	"time"

	"quarry/internal/fault"
)

// AuditEntry is one line of the audit log: who (ActorID, and Actor, the
// name they had then, since accounts are renamed) did Action to Target,
// in project ProjectID ("" for the installation), from Address.
type AuditEntry struct {
	Seq                                                        int64
	At                                                         time.Time
	ActorID, Actor, Action, ProjectID, Target, Address, Detail string
}

// AuditFilter chooses a page of the audit log.
type AuditFilter struct {
	// ProjectID keeps the entries of one project; "" keeps the
	// installation's own entries (accounts, sign-ins), for admins.
	ProjectID string
	// All keeps every entry, whatever its project (admins); ProjectID is
	// then ignored.
	All bool
	// Before keeps entries older than this seq (0: from the newest), so
	// pages follow one another while entries are added.
	Before int64
	// Limit is the page's size, 1 to MaxAuditLimit.
	Limit int
}

// MaxAuditLimit bounds a page of the audit log.
const MaxAuditLimit = 1000

// Audit appends e to the audit log (e.Seq is assigned; a zero At is
// s.Now()).
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	if e.Action == "" {
		return fault.Errorf(fault.EInvalid, "an audit entry needs an action")
	}
	if e.At.IsZero() {
		e.At = s.Now()
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO audit_log (at, actor_id, actor, action, project_id, target, address, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, formatTime(e.At), e.ActorID, e.Actor, e.Action, e.ProjectID, e.Target, e.Address, e.Detail); err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	return nil
}

// AuditLog returns a page of the audit log chosen by f, newest first.
func (s *Store) AuditLog(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	if f.Limit < 1 || f.Limit > MaxAuditLimit {
		return nil, fault.Errorf(fault.EInvalid, "a page of the audit log holds 1 to %d entries, not %d", MaxAuditLimit, f.Limit)
	}
	if f.Before < 0 {
		return nil, fault.Errorf(fault.EInvalid, "before must not be negative")
	}
	before := f.Before
	if before == 0 {
		before = math.MaxInt64
	}
	// Two statements rather than an OR, so a project's page reads its
	// stretch of audit_log_project and no other entry.
	q := `SELECT seq, at, actor_id, actor, action, project_id, target, address, detail FROM audit_log
		WHERE project_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`
	args := []any{f.ProjectID, before, f.Limit}
	if f.All {
		q = `SELECT seq, at, actor_id, actor, action, project_id, target, address, detail FROM audit_log
		WHERE seq < ? ORDER BY seq DESC LIMIT ?`
		args = args[1:]
	}
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var e AuditEntry
		var at string
		if err := rows.Scan(&e.Seq, &at, &e.ActorID, &e.Actor, &e.Action, &e.ProjectID, &e.Target, &e.Address, &e.Detail); err != nil {
			return nil, fmt.Errorf("store: audit log: %w", err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}
