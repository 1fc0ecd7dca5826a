package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/views"
)

// StatusForCode maps an engine error code to its HTTP status. It is the one
// place that decides statuses. Unauthorized is 403 (known, and may not);
// unauthenticated is 401 (sign in or send a token first; the error handler
// adds the Bearer challenge). Unknown codes are our bug, hence 500.
func StatusForCode(code string) int {
	switch code {
	case fault.EInvalid:
		return http.StatusUnprocessableEntity
	case fault.ENotFound:
		return http.StatusNotFound
	case fault.EConflict:
		return http.StatusConflict
	case fault.EUnauthorized:
		return http.StatusForbidden
	case fault.EUnauthenticated:
		return http.StatusUnauthorized
	case fault.ERateLimited:
		return http.StatusTooManyRequests
	case fault.ETooLarge:
		return http.StatusRequestEntityTooLarge
	case fault.EUnavailable:
		return http.StatusServiceUnavailable
	case fault.EStorageFull:
		return http.StatusInsufficientStorage
	default:
		return http.StatusInternalServerError
	}
}

// codeForStatus gives an echo.HTTPError (routing misses, body too large,
// timeouts) the closest engine code, so JSON clients always see one of the
// codes of internal/fault.
func codeForStatus(status int) string {
	switch {
	case status == http.StatusRequestEntityTooLarge:
		return fault.ETooLarge
	case status == http.StatusNotFound:
		return fault.ENotFound
	case status == http.StatusConflict:
		return fault.EConflict
	case status == http.StatusUnauthorized:
		return fault.EUnauthenticated
	case status == http.StatusTooManyRequests:
		return fault.ERateLimited
	case status == http.StatusForbidden:
		return fault.EUnauthorized
	case status >= 400 && status < 500:
		return fault.EInvalid
	default:
		return fault.EInternal
	}
}

// ErrorBody is the JSON shape of every API error, so clients can rely on
// error.code and show error.fields next to their inputs.
type ErrorBody struct {
	Error ErrorJSON `json:"error"`
}

// ErrorJSON is the inside of ErrorBody.
type ErrorJSON struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// retryAfterSeconds is the Retry-After of a busy database's 503: a bulk
// import holds the write lock for at most about a second at a time.
const retryAfterSeconds = "2"

// badRequestError marks a refused payload of a machine caller (an
// inbound trigger): 400, as webhook senders expect, with the wrapped
// error's code, message and fields. Forms and the rest of the API answer
// 422 for the same code.
type badRequestError struct{ err error }

func (b *badRequestError) Error() string { return b.err.Error() }
func (b *badRequestError) Unwrap() error { return b.err }

func badRequest(err error) error { return &badRequestError{err: err} }

// panicError carries a recovered panic and its stack to the error handler,
// which logs it once.
type panicError struct {
	err   error
	stack string
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.err) }
func (p *panicError) Unwrap() error { return p.err }

// errorHandler is echo's HTTPErrorHandler: it logs the error once and
// answers in the form the client asked for (JSON, an HTMX fragment or a page).
type errorHandler struct {
	logger *slog.Logger
}

func newErrorHandler(logger *slog.Logger) *errorHandler {
	return &errorHandler{logger: logger}
}

// problem is an error reduced to what the client may see.
type problem struct {
	status  int
	code    string
	message string
	fields  map[string]string
	// title replaces the status text as the page's heading ("" keeps it).
	title string
	// sent and back are a refused form's text and the page to fill it in
	// again (CSRF failures only).
	sent []views.FormValue
	back string
}

// classify turns any error into a problem. A form refused by the CSRF
// check is the unauthorized code's (403), whatever status echo gave it; an
// echo.HTTPError keeps its status; engine errors get theirs from
// StatusForCode; anything else is an internal error whose details are
// logged but never shown.
func classify(err error) problem {
	if ce, ok := errors.AsType[*csrfError](err); ok {
		return problem{status: StatusForCode(fault.EUnauthorized), code: fault.EUnauthorized, title: ce.title(), message: ce.message()}
	}
	if he, ok := errors.AsType[*echo.HTTPError](err); ok {
		msg := http.StatusText(he.Code)
		if s, ok := he.Message.(string); ok && s != "" && he.Code < 500 {
			msg = s
		}
		return problem{status: he.Code, code: codeForStatus(he.Code), message: msg}
	}
	err = store.Fault(err) // a full disk or a busy database, whoever wrapped it
	code := fault.ErrorCode(err)
	status := StatusForCode(code)
	if _, ok := errors.AsType[*badRequestError](err); ok && code == fault.EInvalid {
		status = http.StatusBadRequest
	}
	if status == http.StatusInternalServerError {
		code = fault.EInternal
	}
	return problem{status: status, code: code, message: fault.ErrorMessage(err), fields: fault.ErrorFields(err)}
}

func (h *errorHandler) handle(err error, c echo.Context) {
	req := c.Request()
	res := c.Response()
	requestID := res.Header().Get(echo.HeaderXRequestID)
	// The error handler runs after the timeout middleware has cancelled
	// the request context, so it renders with a detached one.
	ctx := context.WithoutCancel(req.Context())
	if errors.Is(err, context.Canceled) {
		// The client went away (or the server is stopping): nobody is
		// waiting for an answer, and it is nobody's fault.
		h.logger.InfoContext(ctx, "request canceled", "method", req.Method, "path", req.URL.Path, "request_id", requestID)
		return
	}
	if to, ok := signInRedirect(err, c); ok && !res.Committed {
		// A person reaching a page before signing in (or before the
		// installation has its administrator) is sent where they can.
		if isHTMX(c) {
			res.Header().Set("HX-Redirect", to)
			_ = c.NoContent(http.StatusNoContent)
			return
		}
		_ = c.Redirect(http.StatusSeeOther, to)
		return
	}
	p := explain(classify(err), err, c)
	h.log(ctx, req, p, err, requestID)
	if res.Committed {
		return
	}
	if p.code == fault.EUnauthenticated {
		res.Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="quarry"`)
	}
	if p.code == fault.EUnavailable {
		res.Header().Set("Retry-After", retryAfterSeconds)
	}

	if req.Method == http.MethodHead {
		_ = c.NoContent(p.status)
		return
	}
	var werr error
	switch {
	case wantsJSON(req):
		werr = c.JSON(p.status, ErrorBody{Error: ErrorJSON{Code: p.code, Message: p.message, Fields: p.fields}})
	case isHTMX(c):
		// Show the error in the layout's #flash region whatever the
		// element that made the request targeted.
		res.Header().Set("HX-Retarget", "#flash")
		res.Header().Set("HX-Reswap", "innerHTML")
		werr = renderCtx(ctx, c, p.status, views.ErrorFragment(errorData(p, requestID)))
	default:
		werr = renderCtx(ctx, c, p.status, views.ErrorPage(errorData(p, requestID)))
	}
	if werr != nil {
		h.logger.ErrorContext(ctx, "writing error response", "err", werr, "request_id", requestID)
	}
}

// explain makes the messages of routing misses and refused forms specific
// to the request: which address has no page, which methods an address
// takes, and what a form whose token failed carried, so nothing typed is
// lost.
func explain(p problem, err error, c echo.Context) problem {
	req := c.Request()
	api := wantsJSON(req)
	switch {
	case errors.Is(err, echo.ErrNotFound):
		if api {
			p.message = fmt.Sprintf("no API endpoint at %s (the endpoints are listed in the README)", req.URL.Path)
		} else {
			p.title = "Page not found"
			p.message = fmt.Sprintf("No page at %s. Runs are listed on the home page.", req.URL.Path)
		}
	case errors.Is(err, echo.ErrMethodNotAllowed):
		p.message = fmt.Sprintf("%s does not accept %s requests", req.URL.Path, req.Method)
		var allow []string // from the Allow header echo set, less OPTIONS, which echo answers everywhere
		for m := range strings.SplitSeq(c.Response().Header().Get(echo.HeaderAllow), ",") {
			if m = strings.TrimSpace(m); m != "" && m != http.MethodOptions {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			p.message += " (only " + strings.Join(allow, ", ") + ")"
		}
		p.message += "."
	}
	if ce, ok := errors.AsType[*csrfError](err); ok {
		if api {
			p.message = ce.apiMessage()
		} else if ce.reason != csrfCrossSite {
			p.sent, p.back = sentValues(req), formPage(req.URL.Path)
		}
	}
	return p
}

// sentValues lists a refused form's non-empty values by name (the token
// aside), from the form the CSRF check already parsed.
func sentValues(req *http.Request) []views.FormValue {
	var out []views.FormValue
	for _, name := range slices.Sorted(maps.Keys(req.PostForm)) {
		if name == csrfField {
			continue
		}
		for _, v := range req.PostForm[name] {
			if strings.TrimSpace(v) != "" {
				out = append(out, views.FormValue{Name: name, Value: v})
			}
		}
	}
	return out
}

// formPage is the page that shows the form posted to path, for a link to
// fill it in again; "" when there is none to name.
func formPage(path string) string {
	switch {
	case path == "/runs":
		return "/"
	case path == "/name":
		return "/name"
	case path == "/library/imports":
		return "/library"
	case strings.HasPrefix(path, "/runs/") && strings.Contains(path, "/checkpoints/"):
		return safeNext(strings.SplitN(path, "/checkpoints/", 2)[0])
	}
	return ""
}

// log records the error once: 5xx as errors (our fault, with the cause and
// any panic stack), 4xx as warnings (the client's mistake).
func (h *errorHandler) log(ctx context.Context, req *http.Request, p problem, err error, requestID string) {
	attrs := []any{
		"status", p.status,
		"code", p.code,
		"method", req.Method,
		"path", req.URL.Path,
		"request_id", requestID,
		"err", err.Error(),
	}
	if pe, ok := errors.AsType[*panicError](err); ok {
		attrs = append(attrs, "stack", pe.stack)
	}
	if p.status >= 500 {
		h.logger.ErrorContext(ctx, "request failed", attrs...)
		return
	}
	h.logger.WarnContext(ctx, "request rejected", attrs...)
}

// wantsJSON reports whether the client is an API client: anything under
// /api/, or a request whose Accept header names JSON but not HTML.
func wantsJSON(req *http.Request) bool {
	if req.URL.Path == "/api" || strings.HasPrefix(req.URL.Path, "/api/") {
		return true
	}
	json, html := false, false
	for part := range strings.SplitSeq(req.Header.Get(echo.HeaderAccept), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case echo.MIMEApplicationJSON:
			json = true
		case echo.MIMETextHTML:
			html = true
		}
	}
	return json && !html
}

// errorData turns a problem into the view's props, with fields sorted so
// the page is stable.
func errorData(p problem, requestID string) views.ErrorData {
	d := views.ErrorData{
		Status:    p.status,
		Code:      p.code,
		Title:     p.title,
		Message:   p.message,
		RequestID: requestID,
		Sent:      p.sent,
		Back:      p.back,
	}
	if d.Title == "" {
		d.Title = http.StatusText(p.status)
	}
	if d.Title == "" {
		d.Title = "Error"
	}
	keys := make([]string, 0, len(p.fields))
	for k := range p.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Fields = append(d.Fields, views.FieldError{Field: k, Message: p.fields[k]})
	}
	return d
}

// signInRedirect is where a refused page request goes instead of an error
// page: the first-visit form, or the sign-in form coming back afterwards.
// API calls and other machine requests get their status instead.
func signInRedirect(err error, c echo.Context) (string, bool) {
	req := c.Request()
	if wantsJSON(req) || (req.Method != http.MethodGet && !isHTMX(c)) {
		if r, ok := errors.AsType[*redirectError](err); ok && !wantsJSON(req) {
			return r.to, true
		}
		return "", false
	}
	if r, ok := errors.AsType[*redirectError](err); ok {
		return r.to, true
	}
	if fault.ErrorCode(err) != fault.EUnauthenticated {
		return "", false
	}
	back := req.URL.RequestURI()
	if req.Method != http.MethodGet {
		back = strings.TrimSuffix(strings.SplitN(req.URL.Path, "/checkpoints/", 2)[0], "/")
	}
	return "/login?next=" + url.QueryEscape(safeNext(back)), true
}
