// Package views holds the templ components that render Quarry's HTML. It
// knows nothing of HTTP or of the engine: handlers turn domain values into the
// plain props defined here, so components stay easy to render in tests.
package views

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
}

// FieldError is one invalid input and what is wrong with it.
type FieldError struct {
	Field   string
	Message string
}
