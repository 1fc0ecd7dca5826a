package access

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/fault"
)

// MaxEmailBytes is the longest address SMTP can carry (RFC 5321's 256-byte
// path less its angle brackets).
const MaxEmailBytes = 254

// MaxNameRunes bounds a display name: it labels a person in lists and the
// audit log, not a biography.
const MaxNameRunes = 80

// NormalizeEmail returns the account key for an e-mail address: a bare
// address (no display name, no angle brackets, no comments) as RFC 5322
// reads it, lower-cased so "A@B.ORG" and "a@b.org" are one account.
// Lower-casing the local part is not what RFC 5321 promises, but no
// mail provider our users meet treats case as significant, and two
// accounts differing only in case would be a trap.
func NormalizeEmail(s string) (string, error) {
	trimmed := strings.TrimSpace(s)
	invalid := func(msg string) (string, error) {
		return "", &fault.Error{Code: fault.EInvalid, Message: msg, Fields: map[string]string{"email": msg}}
	}
	if trimmed == "" {
		return invalid("enter an e-mail address")
	}
	if len(trimmed) > MaxEmailBytes {
		return invalid("e-mail address is too long (at most 254 characters)")
	}
	addr, err := mail.ParseAddress(trimmed)
	if err != nil || addr.Name != "" || addr.Address != trimmed {
		return invalid("enter a plain e-mail address, like name@example.org")
	}
	return strings.ToLower(trimmed), nil
}

// CheckDisplayName returns the trimmed display name if it is 1 to
// MaxNameRunes characters of text. Control characters and the bidi
// override and isolate marks are refused: a name is shown among other
// text (member lists, the audit log), and those characters could hide or
// reorder what is around it.
func CheckDisplayName(s string) (string, error) {
	name := strings.TrimSpace(s)
	var msg string
	switch {
	case !utf8.ValidString(name):
		msg = "name must be text (valid UTF-8)"
	case name == "":
		msg = "enter a name"
	case utf8.RuneCountInString(name) > MaxNameRunes:
		msg = "name must be at most 80 characters long"
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || isBidiControl(r) }) >= 0:
		msg = "name must not contain control characters"
	case strings.HasSuffix(strings.ToLower(name), GuestSuffix):
		msg = "a name ending in " + GuestSuffix + " is a share link's guest's"
	default:
		return name, nil
	}
	return "", &fault.Error{Code: fault.EInvalid, Message: msg, Fields: map[string]string{"name": msg}}
}

// GuestSuffix ends the names a share link's guests decide under, so that a
// guest never passes for a member; no account's name ends so.
const GuestSuffix = " (guest)"

// isBidiControl reports the explicit directional formatting characters
// (embeddings, overrides, isolates) of Unicode's bidi algorithm.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}
