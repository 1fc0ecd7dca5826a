package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"quarry/internal/fault"
)

// Account is a person (or a robot with API tokens) who signs in. Email is
// stored as the caller gives it: callers normalise it (lower case,
// trimmed) before storing and before looking it up.
type Account struct {
	ID, Email, Name string
	// PasswordHash is the caller's encoded hash ("" for an account that
	// signs in only through single sign-on).
	PasswordHash string
	// OIDCIssuer and OIDCSubject name the account's single-sign-on
	// identity ("" for none); one account per identity.
	OIDCIssuer, OIDCSubject string
	Admin                   bool
	// Disabled accounts keep their rows (audit, memberships) but cannot
	// sign in: their sessions and API tokens stop working.
	Disabled  bool
	CreatedAt time.Time
}

const accountColumns = `a.id, a.email, a.name, a.password_hash, a.oidc_issuer, a.oidc_subject, a.admin, a.disabled_at, a.created_at`

func scanAccount(row scanner, extra ...any) (Account, error) {
	var a Account
	var disabled, created string
	dest := append([]any{&a.ID, &a.Email, &a.Name, &a.PasswordHash, &a.OIDCIssuer, &a.OIDCSubject, &a.Admin, &disabled, &created}, extra...)
	if err := row.Scan(dest...); err != nil {
		return a, err
	}
	a.Disabled, a.CreatedAt = disabled != "", parseTime(created)
	return a, nil
}

// uniqueViolation reports whether err is the database refusing a
// duplicate in column (as "table.column"; "table." is any of its keys).
// SQLite names them in its message; PostgreSQL names the table, and the
// key's columns in the detail ("Key (lower(name))=(...) already exists").
func uniqueViolation(err error, column string) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code != pgUniqueViolation {
			return false
		}
		table, col, _ := strings.Cut(column, ".")
		key, _, _ := strings.Cut(strings.TrimPrefix(pe.Detail, "Key ("), ")=(")
		return pe.TableName == table && (col == "" || strings.Contains(key, col))
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed") && strings.Contains(err.Error(), column)
}

// foreignKeyViolation reports whether err is the database refusing a row
// whose reference names no row.
func foreignKeyViolation(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "FOREIGN KEY constraint failed") || pgCode(err) == pgForeignKeyViolation)
}

// errEmailTaken is the refusal of a second account with one email, on the
// form's field.
func errEmailTaken(email string) error {
	return &fault.Error{Code: fault.EConflict, Message: "an account with this email exists already",
		Fields: map[string]string{"email": fmt.Sprintf("%s already has an account", email)}}
}

// AccountCount returns how many accounts there are (none: the first visit
// creates the admin).
func (s *Store) AccountCount(ctx context.Context) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count accounts: %w", err)
	}
	return n, nil
}

// CreateFirstAdmin creates a (with Admin forced true) only if there is no
// account yet, creates project p with a as its owner, and moves every run
// with no project into p, in one transaction: of two first visits racing,
// one gets the admin and the other fault.EConflict, and the runs from
// before accounts are nobody's for no moment.
func (s *Store) CreateFirstAdmin(ctx context.Context, a Account, p Project) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil {
		return fmt.Errorf("store: count accounts: %w", err)
	}
	if n > 0 {
		return fault.Errorf(fault.EConflict, "this installation has its first administrator already: sign in")
	}
	a.Admin = true
	if err := s.insertAccount(ctx, tx, a); err != nil {
		return err
	}
	if err := s.insertProject(ctx, tx, p, a.ID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET project_id = ? WHERE project_id = ''`, p.ID); err != nil {
		return fmt.Errorf("store: move runs into the first project: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit first admin: %w", err)
	}
	return nil
}

// CreateAccount creates account a; an email with an account already is
// fault.EConflict on the field "email".
func (s *Store) CreateAccount(ctx context.Context, a Account) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.insertAccount(ctx, tx, a); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit account: %w", err)
	}
	return nil
}

func (s *Store) insertAccount(ctx context.Context, tx *tx, a Account) error {
	fe := fault.FieldErrors{}
	if a.ID == "" {
		fe.Add("id", "an account needs an ID")
	}
	if a.Email == "" {
		fe.Add("email", "an account needs an email")
	}
	if (a.OIDCIssuer == "") != (a.OIDCSubject == "") {
		fe.Add("oidc", "a single-sign-on identity needs both its issuer and its subject")
	}
	if err := fe.Err("the account is incomplete"); err != nil {
		return err
	}
	now := s.Now()
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	disabled := ""
	if a.Disabled {
		disabled = formatTime(now)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO accounts
		(id, email, name, password_hash, admin, oidc_issuer, oidc_subject, disabled_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Email, a.Name, a.PasswordHash, a.Admin, a.OIDCIssuer, a.OIDCSubject, disabled, formatTime(a.CreatedAt))
	switch {
	case uniqueViolation(err, "accounts.email"):
		return errEmailTaken(a.Email)
	case uniqueViolation(err, "accounts.name"):
		// Decisions, marks and votes record a display name: two people
		// must not share one.
		return &fault.Error{Code: fault.EConflict, Message: "the display name is taken",
			Fields: map[string]string{"name": "another account is called " + a.Name + "; choose another name"}}
	case uniqueViolation(err, "accounts.oidc_subject"):
		return fault.Errorf(fault.EConflict, "this single-sign-on identity belongs to another account")
	case uniqueViolation(err, "accounts.id"):
		return fault.Errorf(fault.EConflict, "account %s exists already", a.ID)
	case err != nil:
		return fmt.Errorf("store: insert account: %w", err)
	}
	return nil
}

// Account returns account id, or fault.ENotFound.
func (s *Store) Account(ctx context.Context, id string) (Account, error) {
	return s.accountWhere(ctx, `a.id = ?`, id)
}

// AccountByEmail returns the account with this email, compared as given
// (callers normalise), or fault.ENotFound.
func (s *Store) AccountByEmail(ctx context.Context, email string) (Account, error) {
	return s.accountWhere(ctx, `a.email = ?`, email)
}

// AccountByOIDC returns the account of a single-sign-on identity, or
// fault.ENotFound.
func (s *Store) AccountByOIDC(ctx context.Context, issuer, subject string) (Account, error) {
	if subject == "" {
		return Account{}, fault.Errorf(fault.ENotFound, "no account for an empty single-sign-on subject")
	}
	return s.accountWhere(ctx, `a.oidc_issuer = ? AND a.oidc_subject = ?`, issuer, subject)
}

func (s *Store) accountWhere(ctx context.Context, where string, args ...any) (Account, error) {
	a, err := scanAccount(s.read.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts a WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fault.Errorf(fault.ENotFound, "no such account")
	}
	if err != nil {
		return a, fmt.Errorf("store: account: %w", err)
	}
	return a, nil
}

// Accounts returns every account, by name.
func (s *Store) Accounts(ctx context.Context) ([]Account, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts a ORDER BY lower(a.name), a.email`)
	if err != nil {
		return nil, fmt.Errorf("store: accounts: %w", err)
	}
	defer rows.Close()
	out := []Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("store: accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// SetPassword replaces the account's password hash and deletes every
// session of the account: a new password signs out everywhere, so a
// stolen session dies with the old password.
func (s *Store) SetPassword(ctx context.Context, accountID, hash string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := setPasswordTx(ctx, tx, accountID, hash); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit password: %w", err)
	}
	return nil
}

func setPasswordTx(ctx context.Context, tx *tx, accountID, hash string) error {
	res, err := tx.ExecContext(ctx, `UPDATE accounts SET password_hash = ? WHERE id = ?`, hash, accountID)
	if err != nil {
		return fmt.Errorf("store: set password: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.Errorf(fault.ENotFound, "no account %q", accountID)
	}
	_, err = deleteSessionsTx(ctx, tx, accountID)
	return err
}

// SetAccountDisabled disables or re-enables an account. Disabling deletes
// its sessions and revokes its API tokens (re-enabling brings neither
// back), and refuses (fault.EConflict) to disable the last enabled admin,
// who alone could undo it.
func (s *Store) SetAccountDisabled(ctx context.Context, accountID string, disabled bool) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	a, err := accountTx(ctx, tx, accountID)
	if err != nil {
		return err
	}
	now := formatTime(s.Now())
	if !disabled {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET disabled_at = '' WHERE id = ?`, accountID); err != nil {
			return fmt.Errorf("store: enable account: %w", err)
		}
	} else if !a.Disabled {
		if a.Admin {
			if err := keepAnAdmin(ctx, tx, accountID, "disable"); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET disabled_at = ? WHERE id = ?`, now, accountID); err != nil {
			return fmt.Errorf("store: disable account: %w", err)
		}
		if _, err := deleteSessionsTx(ctx, tx, accountID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE account_id = ? AND revoked_at = ''`, now, accountID); err != nil {
			return fmt.Errorf("store: revoke the account's API tokens: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit account: %w", err)
	}
	return nil
}

// SetAdmin grants or removes the installation's administration; it
// refuses (fault.EConflict) to remove the last enabled admin.
func (s *Store) SetAdmin(ctx context.Context, accountID string, admin bool) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	a, err := accountTx(ctx, tx, accountID)
	if err != nil {
		return err
	}
	if !admin && a.Admin && !a.Disabled {
		if err := keepAnAdmin(ctx, tx, accountID, "remove the administration of"); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET admin = ? WHERE id = ?`, admin, accountID); err != nil {
		return fmt.Errorf("store: set admin: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit account: %w", err)
	}
	return nil
}

// keepAnAdmin refuses to take accountID out of the enabled admins when it
// is the last of them: no one could then administer the installation.
func keepAnAdmin(ctx context.Context, tx *tx, accountID, what string) error {
	var others int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE admin = 1 AND disabled_at = '' AND id <> ?`, accountID).Scan(&others); err != nil {
		return fmt.Errorf("store: count admins: %w", err)
	}
	if others == 0 {
		return fault.Errorf(fault.EConflict, "cannot %s the last administrator: make another account an administrator first", what)
	}
	return nil
}

func accountTx(ctx context.Context, tx *tx, id string) (Account, error) {
	a, err := scanAccount(tx.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts a WHERE a.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fault.Errorf(fault.ENotFound, "no account %q", id)
	}
	if err != nil {
		return a, fmt.Errorf("store: account %s: %w", id, err)
	}
	return a, nil
}

// SetOIDC links account accountID to the single-sign-on identity (issuer,
// subject), replacing any it had (both "" unlink it). An identity linked
// to another account already is fault.EConflict: one account per identity,
// so signing in through the provider always finds one person.
func (s *Store) SetOIDC(ctx context.Context, accountID, issuer, subject string) error {
	if (issuer == "") != (subject == "") {
		return &fault.Error{Code: fault.EInvalid, Message: "the single-sign-on identity is incomplete",
			Fields: map[string]string{"oidc": "a single-sign-on identity needs both its issuer and its subject"}}
	}
	res, err := s.write.ExecContext(ctx, `UPDATE accounts SET oidc_issuer = ?, oidc_subject = ? WHERE id = ?`, issuer, subject, accountID)
	switch {
	case uniqueViolation(err, "accounts.oidc_subject"):
		return fault.Errorf(fault.EConflict, "this single-sign-on identity belongs to another account")
	case err != nil:
		return fmt.Errorf("store: set single-sign-on identity: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.Errorf(fault.ENotFound, "no account %q", accountID)
	}
	return nil
}
