package store

import (
	"errors"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"quarry/internal/fault"
)

// Messages of the two database conditions a caller can do something about.
// They name the cause, so an operator reading a 507 knows where to look.
const (
	MsgStorageFull = "the disk holding the database is full: free some space on it; nothing was saved, and work in progress resumes once writes succeed again"
	MsgBusy        = "the database is busy (another process, such as an import, is writing to it): try again in a moment"
)

// Fault gives a database error the fault code a caller can act on: a full
// disk is fault.EStorageFull and a database locked past the busy timeout is
// fault.EUnavailable, whatever the layers between wrapped them in. Any
// other error is returned as it is. Only the store knows the driver's
// error codes, so this is where they are read.
func Fault(err error) error {
	switch {
	case err == nil:
		return nil
	case StorageFull(err):
		return &fault.Error{Code: fault.EStorageFull, Message: MsgStorageFull, Err: err}
	case Busy(err):
		return &fault.Error{Code: fault.EUnavailable, Message: MsgBusy, Err: err}
	}
	return err
}

// StorageFull reports whether err is the database (or a file beside it,
// such as a spooled upload) failing to write because the disk is full.
func StorageFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL ||
		pgCode(err) == pgDiskFull
}

// Busy reports whether err is the database staying locked by another
// writer for longer than the busy timeout.
func Busy(err error) bool {
	switch pgCode(err) {
	case pgSerializationFailure, pgDeadlockDetected, pgLockNotAvailable:
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// Transient reports whether err is a condition that passes without anyone
// changing the request: a busy database, or a full disk once space is
// freed. Work that met one is retried, not failed.
func Transient(err error) bool {
	return StorageFull(err) || Busy(err)
}

// PostgreSQL's SQLSTATE codes the store reads (Appendix A of its manual).
const (
	pgUniqueViolation      = "23505"
	pgForeignKeyViolation  = "23503"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgLockNotAvailable     = "55P03"
	pgDiskFull             = "53100"
)

// pgCode is err's SQLSTATE when PostgreSQL raised it, else "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
