package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
)

// Invitation is a one-time link sent by email: an invitation to create an
// account (Kind "invite", optionally into a project with a role, or as an
// admin) or a password reset (Kind "reset", for AccountID). The store
// keeps only the hash of the link's token.
type Invitation struct {
	TokenHash, Kind string
	// Email is whom an invitation was sent to; the account created from it
	// takes it when the caller gives none.
	Email string
	// AccountID is the account a reset is for.
	AccountID string
	// ProjectID and Role are the membership an invitation grants ("" for
	// none).
	ProjectID, Role string
	CreatedBy       string
	Admin           bool
	CreatedAt       time.Time
	ExpiresAt       time.Time
	// UsedAt is when it was used (zero while it is not).
	UsedAt time.Time
}

// The kinds of invitation.
const (
	InvitationInvite = "invite"
	InvitationReset  = "reset"
)

const invitationColumns = `token_hash, kind, email, account_id, project_id, role, admin, created_by, created_at, expires_at, used_at`

func scanInvitation(row scanner) (Invitation, error) {
	var inv Invitation
	var created, expires, used string
	if err := row.Scan(&inv.TokenHash, &inv.Kind, &inv.Email, &inv.AccountID, &inv.ProjectID, &inv.Role, &inv.Admin,
		&inv.CreatedBy, &created, &expires, &used); err != nil {
		return inv, err
	}
	inv.CreatedAt, inv.ExpiresAt = parseTime(created), parseTime(expires)
	if used != "" {
		inv.UsedAt = parseTime(used)
	}
	return inv, nil
}

// CreateInvitation stores an invitation or a reset; CreatedAt defaults to
// s.Now().
func (s *Store) CreateInvitation(ctx context.Context, inv Invitation) error {
	fe := fault.FieldErrors{}
	if inv.TokenHash == "" {
		fe.Add("token", "an invitation needs its token's hash")
	}
	switch inv.Kind {
	case InvitationInvite:
		if inv.ProjectID != "" && !validRole(inv.Role) {
			fe.Add("role", fmt.Sprintf("%q is not a role: owner, reviewer or viewer", inv.Role))
		}
		if inv.ProjectID == "" && inv.Role != "" {
			fe.Add("role", "a role needs a project")
		}
	case InvitationReset:
		if inv.AccountID == "" {
			fe.Add("account", "a password reset needs its account")
		}
	default:
		fe.Add("kind", fmt.Sprintf("%q is not a kind of invitation: invite or reset", inv.Kind))
	}
	if inv.ExpiresAt.IsZero() {
		fe.Add("expires", "an invitation needs an expiry")
	}
	if err := fe.Err("the invitation is incomplete"); err != nil {
		return err
	}
	if inv.CreatedAt.IsZero() {
		inv.CreatedAt = s.Now()
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO invitations (`+invitationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')`,
		inv.TokenHash, inv.Kind, inv.Email, inv.AccountID, inv.ProjectID, inv.Role, inv.Admin, inv.CreatedBy,
		formatTime(inv.CreatedAt), formatTime(inv.ExpiresAt))
	if uniqueViolation(err, "invitations.token_hash") {
		return fault.Errorf(fault.EConflict, "this invitation exists already")
	}
	if err != nil {
		return fmt.Errorf("store: create invitation: %w", err)
	}
	return nil
}

// Invitation returns an invitation usable at now: an unknown one is
// fault.ENotFound, a used or expired one fault.EConflict with a message
// saying which.
func (s *Store) Invitation(ctx context.Context, tokenHash string, now time.Time) (Invitation, error) {
	return usableInvitation(ctx, s.read, tokenHash, "", now)
}

// usableInvitation reads the invitation and checks it is of kind (any
// when "") and usable at now.
func usableInvitation(ctx context.Context, q rowQuerier, tokenHash, kind string, now time.Time) (Invitation, error) {
	inv, err := scanInvitation(q.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = ?`, tokenHash))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && kind != "" && inv.Kind != kind) {
		return Invitation{}, fault.Errorf(fault.ENotFound, "this link is not valid: ask for a new one")
	}
	if err != nil {
		return Invitation{}, fmt.Errorf("store: invitation: %w", err)
	}
	what := "invitation"
	if inv.Kind == InvitationReset {
		what = "password reset link"
	}
	if !inv.UsedAt.IsZero() {
		return inv, fault.Errorf(fault.EConflict, "this %s was already used (%s): ask for a new one", what, inv.UsedAt.Format(time.DateTime+" MST"))
	}
	if !now.Before(inv.ExpiresAt) {
		return inv, fault.Errorf(fault.EConflict, "this %s has expired (%s): ask for a new one", what, inv.ExpiresAt.Format(time.DateTime+" MST"))
	}
	return inv, nil
}

// AcceptInvite, in one transaction, checks again that the invitation (of
// kind invite) is usable at now, creates account a (an admin if the
// invitation says so; with the invitation's email if a has none), makes
// it a member of the invitation's project with its role when it names
// one, and marks the invitation used: a link creates one account, however
// often it is clicked. An email with an account already is
// fault.EConflict on the field "email".
func (s *Store) AcceptInvite(ctx context.Context, tokenHash string, a Account, now time.Time) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	inv, err := usableInvitation(ctx, tx, tokenHash, InvitationInvite, now)
	if err != nil {
		return err
	}
	a.Admin = inv.Admin
	if a.Email == "" {
		a.Email = inv.Email
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	if err := s.insertAccount(ctx, tx, a); err != nil {
		return err
	}
	if inv.ProjectID != "" {
		if err := insertMember(ctx, tx, inv.ProjectID, a.ID, inv.Role, now); err != nil {
			if fault.ErrorCode(err) == fault.ENotFound {
				return fault.Errorf(fault.ENotFound, "the project of this invitation no longer exists")
			}
			return err
		}
	}
	if err := markUsed(ctx, tx, tokenHash, now); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit invitation: %w", err)
	}
	return nil
}

// AcceptReset, in one transaction, checks again that the reset link is
// usable at now, sets its account's password hash, deletes the account's
// sessions and marks the link used. It returns the account; a disabled
// one is fault.EConflict (a reset must not bring it back).
func (s *Store) AcceptReset(ctx context.Context, tokenHash, passwordHash string, now time.Time) (Account, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return Account{}, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	inv, err := usableInvitation(ctx, tx, tokenHash, InvitationReset, now)
	if err != nil {
		return Account{}, err
	}
	a, err := accountTx(ctx, tx, inv.AccountID)
	if err != nil {
		return Account{}, err
	}
	if a.Disabled {
		return Account{}, fault.Errorf(fault.EConflict, "this account is disabled: ask an administrator")
	}
	if err := setPasswordTx(ctx, tx, a.ID, passwordHash); err != nil {
		return Account{}, err
	}
	if err := markUsed(ctx, tx, tokenHash, now); err != nil {
		return Account{}, err
	}
	if err := tx.Commit(); err != nil {
		return Account{}, fmt.Errorf("store: commit reset: %w", err)
	}
	a.PasswordHash = passwordHash
	return a, nil
}

func markUsed(ctx context.Context, tx *tx, tokenHash string, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE invitations SET used_at = ? WHERE token_hash = ? AND used_at = ''`, formatTime(now), tokenHash)
	if err != nil {
		return fmt.Errorf("store: use invitation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.Errorf(fault.EConflict, "this link was already used: ask for a new one")
	}
	return nil
}

// Invitations lists the project's pending invitations (unused, unexpired
// at s.Now()), newest first; projectID "" lists the installation-wide
// ones (invitations into no project, and password resets).
func (s *Store) Invitations(ctx context.Context, projectID string) ([]Invitation, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE project_id = ? AND used_at = '' ORDER BY created_at DESC`, projectID)
	if err != nil {
		return nil, fmt.Errorf("store: invitations: %w", err)
	}
	defer rows.Close()
	now := s.Now()
	out := []Invitation{}
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, fmt.Errorf("store: invitations: %w", err)
		}
		if now.Before(inv.ExpiresAt) {
			out = append(out, inv)
		}
	}
	return out, rows.Err()
}

// RevokeInvitation deletes an invitation or reset link, so it no longer
// works; an unknown one is fault.ENotFound.
func (s *Store) RevokeInvitation(ctx context.Context, tokenHash string) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM invitations WHERE token_hash = ?`, tokenHash)
	if err != nil {
		return fmt.Errorf("store: revoke invitation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.Errorf(fault.ENotFound, "no such invitation")
	}
	return nil
}
