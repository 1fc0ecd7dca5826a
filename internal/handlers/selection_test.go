package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/store"
	"quarry/internal/views"
)

// TestProjectLibrarySelection: a project's owner builds its library
// selection (importing a file into it, adding a paper, adding a search's
// matches, removing one); its members list it on the library page; a
// reviewer may not change it, another project's member may not see it,
// and only an administrator imports into the library alone.
func TestProjectLibrarySelection(t *testing.T) {
	t.Parallel()
	tm := setupTeam(t)
	ctx := context.Background()
	count := func() int {
		n, err := tm.st.SelectionCount(ctx, "pa")
		require.NoError(t, err)
		return n
	}
	owner, reviewer, outsider := tm.clients["owner"], tm.clients["reviewer"], tm.clients["outsider"]

	// An owner imports into the library and the project's selection.
	_, page := tm.fetch(t, owner, "/library")
	require.Equal(t, 1, page.Find(`[data-testid="import-project"] option[value="pa"]`).Length(), "the owner may import into project A")
	require.Zero(t, page.Find(`[data-testid="import-project"] option[value=""]`).Length(), "not into the library alone")
	upload := func(c *http.Client, project string) *http.Response {
		t.Helper()
		res, _ := tm.w.postMultipart(t, c, "/library/imports", url.Values{"_csrf": {tm.token(t, c)}, "project": {project}}, "file", "embase.ris", embaseRIS)
		return res
	}
	res := upload(owner, "pa")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	job := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(job, "/library/imports/"), job)
	require.Eventually(t, func() bool { return count() == 2 }, 10*time.Second, 20*time.Millisecond, "the file's two good records join the selection")
	got, _ := tm.fetch(t, owner, job)
	require.Equal(t, http.StatusOK, got.StatusCode, "its owner follows the import")
	got, _ = tm.fetch(t, reviewer, job)
	require.Equal(t, http.StatusNotFound, got.StatusCode, "a reviewer does not")
	require.Equal(t, http.StatusForbidden, upload(owner, "").StatusCode, "only an administrator imports into the library alone")
	require.Equal(t, http.StatusForbidden, upload(reviewer, "pa").StatusCode, "a reviewer does not import")
	require.Equal(t, http.StatusNotFound, upload(outsider, "pa").StatusCode, "nor another project's member")

	// The selection is listed to its members alone.
	res, page = tm.fetch(t, reviewer, "/library?project=pa")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 2, page.Find(`[data-testid="library-paper"]`).Length())
	require.Contains(t, page.Find(`[data-testid="selection-count"]`).Text(), "2 papers in Project A")
	res, _ = tm.fetch(t, outsider, "/library?project=pa")
	require.Equal(t, http.StatusNotFound, res.StatusCode)

	// A paper of the library is added from its page, then removed.
	all, err := tm.st.BrowseLibrary(ctx, store.LibraryQuery{Limit: 100})
	require.NoError(t, err)
	var other string
	for _, p := range all.Papers {
		if in, err := tm.st.SelectedIn(ctx, p.ID, []string{"pa"}); err == nil && len(in) == 0 {
			other = p.ID
			break
		}
	}
	require.NotEmpty(t, other)
	_, page = tm.fetch(t, owner, views.PaperURL(other))
	sel := page.Find(`[data-testid="paper-selection"][data-project="pa"]`)
	require.Equal(t, "false", sel.AttrOr("data-in", ""))
	require.Equal(t, 1, sel.Find(`[data-testid="paper-select"]`).Length())
	_, page = tm.fetch(t, reviewer, views.PaperURL(other))
	require.Zero(t, page.Find(`[data-testid="paper-select"]`).Length(), "a reviewer sees the selection but may not change it")
	add := url.Values{"action": {"add"}, "paper": {other}, "next": {views.PaperURL(other)}}
	res, _ = tm.send(t, reviewer, "/projects/pa/selection", add)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res, _ = tm.send(t, outsider, "/projects/pa/selection", add)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Equal(t, 2, count(), "refused changes change nothing")
	res, _ = tm.send(t, owner, "/projects/pa/selection", add)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, views.PaperURL(other)+"?changed=1", res.Header.Get("Location"))
	require.Equal(t, 3, count())
	_, page = tm.fetch(t, owner, views.PaperURL(other))
	require.Equal(t, "true", page.Find(`[data-testid="paper-selection"][data-project="pa"]`).AttrOr("data-in", ""))
	res, _ = tm.send(t, owner, "/projects/pa/selection", url.Values{"action": {"remove"}, "paper": {other}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, 2, count())
	res, _ = tm.send(t, owner, "/projects/pa/selection", url.Values{"action": {"add"}, "paper": {other}, "next": {"https://evil.example/"}})
	require.Equal(t, "/library?project=pa&changed=1", res.Header.Get("Location"), "next is a library page or nothing")

	// A search's matches are added at once from the library page.
	_, page = tm.fetch(t, owner, "/library?q=memory")
	form := page.Find(`[data-testid="select-matches"]`)
	require.Equal(t, 1, form.Length())
	require.Equal(t, "/projects/pa/selection", form.AttrOr("action", ""))
	res, _ = tm.send(t, owner, "/projects/pa/selection", url.Values{"action": {"add"}, "q": {"memory"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	matches, err := tm.st.BrowseLibrary(ctx, store.LibraryQuery{Text: "memory", Limit: 100})
	require.NoError(t, err)
	inSel, err := tm.st.BrowseLibrary(ctx, store.LibraryQuery{Text: "memory", Limit: 100, Selection: "pa"})
	require.NoError(t, err)
	require.Equal(t, matches.Total, inSel.Total, "every match is in the selection")
	require.Positive(t, matches.Total)
}

// TestSelectionNeedsAProject: a run of no project (open mode) cannot ask
// for a library selection; the API names the field.
func TestSelectionNeedsAProject(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	res := w.postJSON(t, "/api/runs", map[string]any{"question": "sleep and memory", "library": "project"})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Contains(t, fmt.Sprint(body), "library")
	res = w.postJSON(t, "/api/runs", map[string]any{"question": "sleep and memory", "library": "everything"})
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "library is all or project")
}
