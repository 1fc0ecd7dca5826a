package handlers_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
)

// TestHeadAnswersLikeGet: every page a GET reads answers HEAD with the
// GET's status and headers and no body (monitors and link checkers send
// HEAD), and a 405's Allow header names HEAD beside GET.
func TestHeadAnswersLikeGet(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	w.signIn(t, w.client, "Ada")
	run := w.startAPIRun(t, map[string]any{"question": "sleep and memory consolidation", "max_iterations": 1,
		"strategy_checkpoint": true, "sources": testapp.Sources})
	w.waitForCheckpoint(t, run.ID, "strategy_confirmation", 1)
	noFollow := *w.client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	do := func(t *testing.T, method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, w.srv.URL+path, nil)
		require.NoError(t, err)
		res, err := noFollow.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, string(body)
	}
	for _, path := range []string{
		"/", "/name", "/healthz", "/readyz", "/workflows", "/library", "/library/export?format=ris",
		"/runs/" + run.ID, "/runs/" + run.ID + "/status", "/runs/" + run.ID + "/report.md", "/runs/" + run.ID + "/report.csv", "/runs/" + run.ID + "/prisma.svg",
		"/api/runs/" + run.ID, "/api/runs/" + run.ID + "/export?format=ris&set=accumulated",
		"/static/app.css", "/runs/nosuchrun",
	} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			t.Parallel()
			get, _ := do(t, http.MethodGet, path)
			head, body := do(t, http.MethodHead, path)
			require.Equal(t, get.StatusCode, head.StatusCode, "HEAD %s", path)
			if get.StatusCode < 400 { // an error's HEAD answer is its status alone
				require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"))
			}
			require.Empty(t, body)
		})
	}
	t.Run("AllowNamesHead", func(t *testing.T) {
		t.Parallel()
		res, _ := do(t, http.MethodDelete, "/runs/"+run.ID)
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		require.Contains(t, res.Header.Get("Allow"), http.MethodHead)
	})
}
