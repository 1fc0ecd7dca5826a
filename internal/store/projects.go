package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quarry/internal/fault"
)

// Project is a team's space: its runs, its members and their roles.
type Project struct {
	ID, Name string
	// CreatedBy is the ID of the account that created it ("" when unknown).
	CreatedBy string
	CreatedAt time.Time
}

// ProjectRole is a project an account is a member of, with its role there.
type ProjectRole struct {
	Project
	Role string
}

// Member is an account of a project, with its role there.
type Member struct {
	Account
	Role    string
	AddedAt time.Time
}

// The roles of a project's members: an owner manages the project and its
// members, a reviewer also decides at checkpoints, a viewer reads.
const (
	RoleOwner    = "owner"
	RoleReviewer = "reviewer"
	RoleViewer   = "viewer"
)

// validRole reports whether role is one of the members' roles.
func validRole(role string) bool {
	return role == RoleOwner || role == RoleReviewer || role == RoleViewer
}

func errBadRole(role string) error {
	return &fault.Error{Code: fault.EInvalid, Message: "unknown role",
		Fields: map[string]string{"role": fmt.Sprintf("%q is not a role: owner, reviewer or viewer", role)}}
}

// CreateProject creates project p with the account ownerID as its first
// member, an owner, in one transaction: a project never has no owner.
// CreatedBy defaults to the owner, CreatedAt to s.Now().
func (s *Store) CreateProject(ctx context.Context, p Project, ownerID string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.insertProject(ctx, tx, p, ownerID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit project: %w", err)
	}
	return nil
}

func (s *Store) insertProject(ctx context.Context, tx *tx, p Project, ownerID string) error {
	fe := fault.FieldErrors{}
	if p.ID == "" {
		fe.Add("id", "a project needs an ID")
	}
	if p.Name == "" {
		fe.Add("name", "a project needs a name")
	}
	if err := fe.Err("the project is incomplete"); err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = s.Now()
	}
	if p.CreatedBy == "" {
		p.CreatedBy = ownerID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, name, created_by, created_at) VALUES (?, ?, ?, ?)`,
		p.ID, p.Name, p.CreatedBy, formatTime(p.CreatedAt))
	if uniqueViolation(err, "projects.id") {
		return fault.Errorf(fault.EConflict, "project %s exists already", p.ID)
	}
	if err != nil {
		return fmt.Errorf("store: insert project: %w", err)
	}
	return insertMember(ctx, tx, p.ID, ownerID, RoleOwner, p.CreatedAt)
}

func insertMember(ctx context.Context, tx *tx, projectID, accountID, role string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, account_id, role, added_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project_id, account_id) DO UPDATE SET role = excluded.role`,
		projectID, accountID, role, formatTime(at))
	if foreignKeyViolation(err) {
		return fault.Errorf(fault.ENotFound, "no account %q or no project %q", accountID, projectID)
	}
	if err != nil {
		return fmt.Errorf("store: add member: %w", err)
	}
	return nil
}

// Project returns project id, or fault.ENotFound.
func (s *Store) Project(ctx context.Context, id string) (Project, error) {
	p, err := scanProject(s.read.QueryRowContext(ctx, `SELECT id, name, created_by, created_at FROM projects WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, fault.Errorf(fault.ENotFound, "no project %q", id)
	}
	if err != nil {
		return p, fmt.Errorf("store: project %s: %w", id, err)
	}
	return p, nil
}

func scanProject(row scanner, extra ...any) (Project, error) {
	var p Project
	var created string
	if err := row.Scan(append([]any{&p.ID, &p.Name, &p.CreatedBy, &created}, extra...)...); err != nil {
		return p, err
	}
	p.CreatedAt = parseTime(created)
	return p, nil
}

// Projects returns every project, by name (for admins, who see all).
func (s *Store) Projects(ctx context.Context) ([]Project, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, created_by, created_at FROM projects ORDER BY lower(name), id`)
	if err != nil {
		return nil, fmt.Errorf("store: projects: %w", err)
	}
	defer rows.Close()
	out := []Project{}
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, fmt.Errorf("store: projects: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// AccountProjects returns the projects the account is a member of, with
// its role in each, by project name.
func (s *Store) AccountProjects(ctx context.Context, accountID string) ([]ProjectRole, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT p.id, p.name, p.created_by, p.created_at, m.role
		FROM project_members m JOIN projects p ON p.id = m.project_id
		WHERE m.account_id = ? ORDER BY lower(p.name), p.id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: account projects: %w", err)
	}
	defer rows.Close()
	out := []ProjectRole{}
	for rows.Next() {
		var pr ProjectRole
		if pr.Project, err = scanProject(rows, &pr.Role); err != nil {
			return nil, fmt.Errorf("store: account projects: %w", err)
		}
		out = append(out, pr)
	}
	return out, rows.Err()
}

// Members returns the project's members, by name.
func (s *Store) Members(ctx context.Context, projectID string) ([]Member, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+accountColumns+`, m.role, m.added_at
		FROM project_members m JOIN accounts a ON a.id = m.account_id
		WHERE m.project_id = ? ORDER BY lower(a.name), a.email`, projectID)
	if err != nil {
		return nil, fmt.Errorf("store: members: %w", err)
	}
	defer rows.Close()
	out := []Member{}
	for rows.Next() {
		var m Member
		var added string
		if m.Account, err = scanAccount(rows, &m.Role, &added); err != nil {
			return nil, fmt.Errorf("store: members: %w", err)
		}
		m.AddedAt = parseTime(added)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Role returns the account's role in the project: "" and no error when
// it is not a member (nor is there such a project).
func (s *Store) Role(ctx context.Context, projectID, accountID string) (string, error) {
	return roleOf(ctx, s.read, projectID, accountID)
}

// RoleByName is Role for the account with display name name (unique,
// compared without case, as decisions and votes record it); "" when no
// such account is a member.
func (s *Store) RoleByName(ctx context.Context, projectID, name string) (string, error) {
	var role string
	err := s.read.QueryRowContext(ctx, `SELECT m.role FROM project_members m JOIN accounts a ON a.id = m.account_id
		WHERE m.project_id = ? AND lower(a.name) = lower(?) AND a.disabled_at = ''`, projectID, name).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: role by name: %w", err)
	}
	return role, nil
}

// rowQuerier reads one row through a pool or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func roleOf(ctx context.Context, q rowQuerier, projectID, accountID string) (string, error) {
	var role string
	err := q.QueryRowContext(ctx, `SELECT role FROM project_members WHERE project_id = ? AND account_id = ?`, projectID, accountID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: role: %w", err)
	}
	return role, nil
}

// SetMember adds the account to the project with role, or changes its
// role; demoting the last owner is fault.EConflict (a project keeps
// someone who can manage it). An unknown project or account is
// fault.ENotFound.
func (s *Store) SetMember(ctx context.Context, projectID, accountID, role string) error {
	if !validRole(role) {
		return errBadRole(role)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	current, err := roleOf(ctx, tx, projectID, accountID)
	if err != nil {
		return err
	}
	if current == RoleOwner && role != RoleOwner {
		if err := keepAnOwner(ctx, tx, projectID, "demote"); err != nil {
			return err
		}
	}
	if err := insertMember(ctx, tx, projectID, accountID, role, s.Now()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit member: %w", err)
	}
	return nil
}

// RemoveMember takes the account out of the project: not a member is
// fault.ENotFound, the last owner fault.EConflict.
func (s *Store) RemoveMember(ctx context.Context, projectID, accountID string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	current, err := roleOf(ctx, tx, projectID, accountID)
	if err != nil {
		return err
	}
	if current == "" {
		return fault.Errorf(fault.ENotFound, "account %s is not a member of project %s", accountID, projectID)
	}
	if current == RoleOwner {
		if err := keepAnOwner(ctx, tx, projectID, "remove"); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM project_members WHERE project_id = ? AND account_id = ?`, projectID, accountID); err != nil {
		return fmt.Errorf("store: remove member: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit member: %w", err)
	}
	return nil
}

// keepAnOwner refuses to take an owner out of a project with one owner.
func keepAnOwner(ctx context.Context, tx *tx, projectID, what string) error {
	var owners int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM project_members WHERE project_id = ? AND role = 'owner'`, projectID).Scan(&owners); err != nil {
		return fmt.Errorf("store: count owners: %w", err)
	}
	if owners <= 1 {
		return fault.Errorf(fault.EConflict, "cannot %s the project's last owner: make another member an owner first", what)
	}
	return nil
}
