// Package views holds the templ components that render Quarry's HTML. It
// knows nothing of HTTP or of the engine: handlers turn domain values into the
// plain props defined here, so components stay easy to render in tests.
package views

import "strings"

// htmxConfig makes htmx 2 swap error responses (4xx/5xx) instead of dropping
// them, so the error handler's fragments become visible; "error": true keeps
// the htmx:responseError event firing for scripts that listen for it.
// includeIndicatorStyles is off because the Content-Security-Policy forbids
// the inline <style> htmx would inject; app.css styles .htmx-indicator instead.
const htmxConfig = `{"includeIndicatorStyles":false,"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"[45]..","swap":true,"error":true}]}`

// ErrorData is what an error page or fragment shows. Fields is a slice, not a
// map, so the order is decided once by the caller and stays stable.
type ErrorData struct {
	Status    int
	Code      string
	Title     string
	Message   string
	Fields    []FieldError
	RequestID string
	// Sent is the text a refused form carried (its security token had
	// expired), shown so nothing typed is lost: the person copies it into
	// a fresh form. Empty for other errors.
	Sent []FormValue
	// Back is the page whose form can be filled again ("" for none).
	Back string
}

// FormValue is one submitted form field.
type FormValue struct {
	Name  string
	Value string
}

// FieldError is one invalid input and what is wrong with it.
type FieldError struct {
	Field   string
	Message string
}

// sentRows sizes a textarea showing a submitted value: one row per line,
// between 1 and 10.
func sentRows(v string) int {
	return min(max(strings.Count(v, "\n")+1, 1), 10)
}
