package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNameNextStaysLocal: POST /name goes on to next only when it is a
// path on this site; anything a browser could resolve to another host
// (a scheme, "//", a backslash, a tab or newline it strips) goes home.
func TestNameNextStaysLocal(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	c := newClient(t)
	_, doc := w.get(t, c, "/name")
	token := csrf(doc)
	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	for _, tt := range []struct{ name, next, want string }{
		{"Local", "/runs/r1", "/runs/r1"},
		{"LocalWithQuery", "/library?q=sleep", "/library?q=sleep"},
		{"Empty", "", "/"},
		{"SchemeRelative", "//evil.example", "/"},
		{"Backslash", `/\evil.example`, "/"},
		{"TabThenSlash", "/\t/evil.example", "/"},
		{"EncodedTab", "/%09/evil.example", "/"},
		{"EncodedBackslash", "/%5cevil.example", "/"},
		{"EncodedBackslashUpper", "/%5Cevil.example", "/"},
		{"NewlineThenSlash", "/\n/evil.example", "/"},
		{"CarriageReturn", "/\r/evil.example", "/"},
		{"NUL", "/\x00/evil.example", "/"},
		{"DEL", "/\x7f/evil.example", "/"},
		{"Absolute", "https://evil.example", "/"},
		{"JavaScript", "javascript:alert(1)", "/"},
		{"Relative", "evil.example", "/"},
		{"LeadingSpace", " /runs/r1", "/"},
		{"Malformed", "/%zz", "/"},
		{"EncodedSlash", "/%2f/evil.example", "/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := url.Values{"_csrf": {token}, "name": {"Ada"}, "next": {tt.next}}.Encode()
			req, err := http.NewRequest(http.MethodPost, w.srv.URL+"/name", strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := noFollow.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
			require.Equal(t, tt.want, res.Header.Get("Location"), "next=%q", tt.next)
		})
	}
}
