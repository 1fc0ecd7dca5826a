// Package fault is the error vocabulary every layer speaks: a small, closed set
// of codes, a human message and per-field problems for forms. The HTTP layer
// maps each code to one status in one place; nothing else decides statuses.
package fault

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Error codes are the small, closed vocabulary every layer speaks. The HTTP
// layer maps each to one status in one place; nothing else decides statuses.
const (
	EInvalid      = "invalid"      // bad input: a form field, a workflow definition, a payload
	ENotFound     = "not_found"    // the thing asked for does not exist
	EConflict     = "conflict"     // the request lost a race (e.g. a checkpoint was already decided)
	EUnauthorized = "unauthorized" // the caller may not do this
	// EUnauthenticated: the caller must sign in (or send a valid API
	// token) first; EUnauthorized is for someone known who may not.
	EUnauthenticated = "unauthenticated"
	ERateLimited     = "rate_limited" // too many attempts (sign-in): wait and try again
	ETooLarge        = "too_large"    // the input is over a size limit: send less, not something else
	EUnavailable     = "unavailable"  // busy for a moment (the database is locked by another writer): try again shortly
	EStorageFull     = "storage_full" // the disk holding the database is full: nothing can be saved until space is freed
	EInternal        = "internal"     // our fault; details are logged, not shown
)

// Error is an application error with a code, a human message and, for
// validation failures, a message per field so forms can show each error next
// to its input.
type Error struct {
	Code    string
	Message string
	// Fields maps a field path (e.g. "queries[1].text") to its problem.
	Fields map[string]string
	// Err is an optional underlying cause, kept for logs and errors.Is.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(e.Fields[k])
		}
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrors collects per-field validation problems; Err returns nil when
// there are none, so validators can build one up and return it at the end.
type FieldErrors map[string]string

// Add records a problem for a field, keeping the first one reported.
func (f FieldErrors) Add(field, msg string) {
	if _, ok := f[field]; !ok {
		f[field] = msg
	}
}

// Err turns the collected problems into an EInvalid *Error (nil if none).
func (f FieldErrors) Err(message string) error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Code: EInvalid, Message: message, Fields: f}
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal for
// any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the human message of err's *Error, or a generic text
// for internal errors so that details never leak to users.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != EInternal {
		return e.Message
	}
	return "internal error"
}

// ErrorFields returns the per-field problems carried by err, if any.
func ErrorFields(err error) map[string]string {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}
