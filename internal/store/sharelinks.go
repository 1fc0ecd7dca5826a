package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
)

// ShareLink lets a guest without an account see, or also decide at the
// checkpoints of, one run of a project (RunID) or every run of it (RunID
// ""). The store keeps the hash of the link's token.
type ShareLink struct {
	ID, ProjectID, RunID string
	// Capability is "view" or "decide".
	Capability string
	// GuestName is who the link was made for, shown as the decider.
	GuestName string
	CreatedBy string
	CreatedAt time.Time
	// RevokedAt is zero while the link works.
	RevokedAt time.Time
}

// The capabilities of a share link.
const (
	ShareView   = "view"
	ShareDecide = "decide"
)

const shareLinkColumns = `id, project_id, run_id, capability, guest_name, created_by, created_at, revoked_at`

func scanShareLink(row scanner) (ShareLink, error) {
	var l ShareLink
	var created, revoked string
	if err := row.Scan(&l.ID, &l.ProjectID, &l.RunID, &l.Capability, &l.GuestName, &l.CreatedBy, &created, &revoked); err != nil {
		return l, err
	}
	l.CreatedAt, l.RevokedAt = parseTime(created), optionalTime(revoked)
	return l, nil
}

// CreateShareLink stores link l under the hash of its token; CreatedAt
// defaults to s.Now(). An unknown project or run is fault.ENotFound; a
// run of another project is fault.EInvalid on the field "run" (a link
// shares nothing beyond its project).
func (s *Store) CreateShareLink(ctx context.Context, l ShareLink, tokenHash string) error {
	fe := fault.FieldErrors{}
	if l.ID == "" || tokenHash == "" || l.ProjectID == "" {
		fe.Add("link", "a share link needs an ID, its token's hash and a project")
	}
	if l.Capability != ShareView && l.Capability != ShareDecide {
		fe.Add("capability", fmt.Sprintf("%q is not a capability: view or decide", l.Capability))
	}
	if err := fe.Err("the share link is incomplete"); err != nil {
		return err
	}
	if l.CreatedAt.IsZero() {
		l.CreatedAt = s.Now()
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if l.RunID != "" {
		var project string
		err := tx.QueryRowContext(ctx, `SELECT project_id FROM runs WHERE id = ?`, l.RunID).Scan(&project)
		if errors.Is(err, sql.ErrNoRows) {
			return fault.Errorf(fault.ENotFound, "no run %q", l.RunID)
		}
		if err != nil {
			return fmt.Errorf("store: share link: %w", err)
		}
		if project != l.ProjectID {
			return &fault.Error{Code: fault.EInvalid, Message: "the run is not in this project",
				Fields: map[string]string{"run": fmt.Sprintf("run %s is not in project %s", l.RunID, l.ProjectID)}}
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO share_links (id, token_hash, project_id, run_id, capability, guest_name, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, l.ID, tokenHash, l.ProjectID, l.RunID, l.Capability, l.GuestName, l.CreatedBy, formatTime(l.CreatedAt))
	switch {
	case foreignKeyViolation(err):
		return fault.Errorf(fault.ENotFound, "no project %q", l.ProjectID)
	case uniqueViolation(err, "share_links."):
		return fault.Errorf(fault.EConflict, "this share link exists already")
	case err != nil:
		return fmt.Errorf("store: create share link: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit share link: %w", err)
	}
	return nil
}

// ShareLinks lists the project's links, revoked ones too, newest first.
func (s *Store) ShareLinks(ctx context.Context, projectID string) ([]ShareLink, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+shareLinkColumns+` FROM share_links WHERE project_id = ? ORDER BY created_at DESC, id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("store: share links: %w", err)
	}
	defer rows.Close()
	out := []ShareLink{}
	for rows.Next() {
		l, err := scanShareLink(rows)
		if err != nil {
			return nil, fmt.Errorf("store: share links: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// RevokeShareLink stops the project's link id from working; a link of
// another project is fault.ENotFound, one revoked already no error.
func (s *Store) RevokeShareLink(ctx context.Context, projectID, id string) error {
	return s.revoke(ctx, `share_links`, `project_id`, projectID, id, "share link in this project")
}

// ShareLinkByToken returns the live link with this token's hash; a
// revoked or unknown one is fault.ENotFound (a guest learns nothing from
// the difference).
func (s *Store) ShareLinkByToken(ctx context.Context, tokenHash string) (ShareLink, error) {
	l, err := scanShareLink(s.read.QueryRowContext(ctx, `SELECT `+shareLinkColumns+` FROM share_links WHERE token_hash = ?`, tokenHash))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !l.RevokedAt.IsZero()) {
		return ShareLink{}, fault.Errorf(fault.ENotFound, "this link is not valid (it may have been revoked)")
	}
	if err != nil {
		return ShareLink{}, fmt.Errorf("store: share link: %w", err)
	}
	return l, nil
}

// ShareLink returns link id, revoked ones too (RevokedAt set), or
// fault.ENotFound.
func (s *Store) ShareLink(ctx context.Context, id string) (ShareLink, error) {
	l, err := scanShareLink(s.read.QueryRowContext(ctx, `SELECT `+shareLinkColumns+` FROM share_links WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fault.Errorf(fault.ENotFound, "no share link %q", id)
	}
	if err != nil {
		return l, fmt.Errorf("store: share link %s: %w", id, err)
	}
	return l, nil
}
