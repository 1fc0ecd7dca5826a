package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers/testapp"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/views"
)

// setupLibraryWeb is setupWeb with a library of papers instead of the
// demo one.
func setupLibraryWeb(t *testing.T, papers []research.RawPaper) *web {
	t.Helper()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")},
		app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	w := serveApp(t, a)
	i := 0
	_, err = library.Import(context.Background(), a.Store(), func() (library.Record, error) {
		if i == len(papers) {
			return library.Record{}, io.EOF
		}
		i++
		return library.Record{Line: i, Paper: papers[i-1], Origin: "test.ris"}, nil
	}, library.ImportOptions{})
	require.NoError(t, err)
	return w
}

// numberedPapers are n papers titled "Paper NNN on sleep" ("… on raft"
// for every fifth), imported in order.
func numberedPapers(n int) []research.RawPaper {
	out := make([]research.RawPaper, n)
	for i := range out {
		topic := "sleep"
		if i%5 == 0 {
			topic = "raft"
		}
		p := research.RawPaper{Title: fmt.Sprintf("Paper %03d on %s", i, topic), Year: 2000 + i%20, Authors: []string{"Ada Lovelace"},
			DOI: fmt.Sprintf("10.7777/p.%d", i)}
		p.ID = research.StableID(p)
		out[i] = p
	}
	return out
}

func libraryRows(doc *goquery.Document) []string {
	return doc.Find(`[data-testid="library-paper"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") })
}

// TestLibraryList: GET /library lists the library newest import first, 50
// a page with "papers 1–50 of 121" and previous/next links; ?q= searches
// it (every word, any order, case-insensitive), keeps the search in the
// form and the pager; text that is FTS5 syntax or markup is searched and
// shown as text, never an error or markup. On the old code the page had
// no list at all.
func TestLibraryList(t *testing.T) {
	t.Parallel()
	papers := numberedPapers(120)
	script := research.RawPaper{Title: testapp.ScriptTitle, Abstract: "hostile", Year: 2024, DOI: "10.7777/script"}
	script.ID = research.StableID(script)
	papers = append(papers, script)
	w := setupLibraryWeb(t, papers)
	w.signIn(t, w.client, "Ada")

	res, doc := w.get(t, w.client, "/library")
	require.Equal(t, http.StatusOK, res.StatusCode)
	rows := libraryRows(doc)
	require.Len(t, rows, 50)
	require.Equal(t, script.ID, rows[0], "newest import first")
	require.Equal(t, papers[119].ID, rows[1])
	sum, prev, next := pagerOf(doc, "library-pager")
	require.Equal(t, "papers 1–50 of 121", sum)
	require.Empty(t, prev)
	require.Equal(t, "/library?page=2", next)
	require.Contains(t, doc.Find(`[data-testid="library-count"]`).Text(), "121 papers")
	first := doc.Find(`[data-testid="library-paper"]`).First()
	require.Equal(t, testapp.ScriptTitle, first.Find(`[data-testid="library-paper-link"]`).Text(), "a title's markup is text")
	require.Equal(t, views.PaperURL(script.ID), first.Find(`[data-testid="library-paper-link"]`).AttrOr("href", ""))
	require.Zero(t, doc.Find(`main script`).Length())

	_, doc = w.get(t, w.client, "/library?page=3")
	require.Len(t, libraryRows(doc), 21)
	sum, prev, next = pagerOf(doc, "library-pager")
	require.Equal(t, "papers 101–121 of 121", sum)
	require.Equal(t, "/library?page=2", prev)
	require.Empty(t, next)
	require.Equal(t, "101", doc.Find(`[data-testid="library-papers"]`).AttrOr("start", ""), "numbering goes on across pages")

	_, doc = w.get(t, w.client, "/library?page=4")
	require.Empty(t, libraryRows(doc))
	sum, prev, _ = pagerOf(doc, "library-pager")
	require.Equal(t, "no papers on this page (121 in all)", sum)
	require.Equal(t, "/library?page=3", prev)

	// Search: 24 raft papers; page size 50 holds them all.
	_, doc = w.get(t, w.client, "/library?q=RAFT+paper")
	require.Len(t, libraryRows(doc), 24)
	sum, _, next = pagerOf(doc, "library-pager")
	require.Equal(t, "papers 1–24 of 24", sum)
	require.Empty(t, next)
	require.Equal(t, "RAFT paper", doc.Find(`[data-testid="library-q"]`).AttrOr("value", ""))
	require.Contains(t, doc.Find(`[data-testid="library-count"]`).Text(), "121 papers", "the count is the library's, not the search's")

	// 96 sleep papers: two pages, and the pager keeps the search.
	_, doc = w.get(t, w.client, "/library?q=sleep")
	sum, _, next = pagerOf(doc, "library-pager")
	require.Equal(t, "papers 1–50 of 97", sum, "96 numbered papers and the script one")
	require.Equal(t, "/library?page=2&q=sleep", next)
	_, doc = w.get(t, w.client, next)
	require.Len(t, libraryRows(doc), 47)

	for _, q := range []string{`"unbalanced`, `sleep AND (`, `NEAR(raft`, `title:paper`, `*`, `-`} {
		res, _ := w.get(t, w.client, "/library?q="+url.QueryEscape(q))
		require.Equal(t, http.StatusOK, res.StatusCode, q)
	}
	_, doc = w.get(t, w.client, "/library?q="+url.QueryEscape(`<script>window.pwned=1</script>`))
	require.Equal(t, []string{script.ID}, libraryRows(doc), "the words of the markup are searched")
	_, doc = w.get(t, w.client, "/library?q="+url.QueryEscape(`<b>nothing</b>`))
	require.Empty(t, libraryRows(doc))
	require.Contains(t, doc.Find(`[data-testid="library-none"]`).Text(), "<b>nothing</b>", "the search is shown as text")
	require.Zero(t, doc.Find(`main b`).Length())

	res, doc = w.get(t, w.client, "/library?page=x")
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-testid="error-field"][data-field="page"]`).Length())
}

// TestLibraryPaperPage: GET /library/papers/:id shows a paper's metadata
// and the runs that showed it for review, each with the paper's current
// mark there; the ID may come escaped (as links write it) or with its
// slashes; links are made only of http(s) addresses; an unknown paper is
// the 404 error page. On the old code the route did not exist (404 for
// every paper).
func TestLibraryPaperPage(t *testing.T) {
	t.Parallel()
	papers := testapp.Library()
	papers[0].PMID, papers[0].Volume, papers[0].Issue, papers[0].Pages = "12683482", "26", "2", "117-126"
	papers[0].Abstract = "A <i>markup</i> abstract & more."
	papers[1].URL = "javascript:alert(1)"
	w := setupLibraryWeb(t, papers)
	runPath, review := w.startReview(t, "2")
	runID := strings.TrimPrefix(runPath, "/runs/")
	shown := paperIDs(review)
	require.Contains(t, shown, papers[0].ID, "the run shows the first library paper")

	// Mark it: the paper's page shows the newest mark.
	for _, m := range []map[string]string{{"mark": "unsure"}, {"mark": "relevant", "note": "the key <paper>"}} {
		res := w.doJSON(t, http.MethodPut, markPath(runID, papers[0].ID), m)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}

	p := papers[0]
	require.True(t, strings.HasPrefix(p.ID, "doi:10.5555/sleep.0"), p.ID)
	res, doc := w.get(t, w.client, views.PaperURL(p.ID))
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, p.ID, doc.Find(`[data-testid="paper-page"]`).AttrOr("data-paper-id", ""))
	require.Equal(t, p.Title, doc.Find(`[data-testid="paper-title"]`).Text())
	require.Equal(t, "Author A", doc.Find(`[data-testid="paper-authors"]`).Text())
	require.Equal(t, "2010 · Journal of Sleep Research 26(2), 117-126", doc.Find(`[data-testid="paper-venue"]`).Text())
	require.Equal(t, "https://doi.org/10.5555/sleep.0", doc.Find(`[data-testid="paper-doi"]`).AttrOr("href", ""))
	require.Equal(t, "https://pubmed.ncbi.nlm.nih.gov/12683482/", doc.Find(`[data-testid="paper-pmid"]`).AttrOr("href", ""))
	require.Equal(t, p.Abstract, doc.Find(`[data-testid="paper-abstract"]`).Text(), "the abstract's markup is text")
	require.Zero(t, doc.Find(`main i`).Length())
	require.Contains(t, doc.Find(`[data-testid="paper-source"]`).Text(), "test.ris")

	run := doc.Find(`[data-testid="paper-run"]`)
	require.Equal(t, 1, run.Length())
	require.Equal(t, runID, run.AttrOr("data-run-id", ""))
	require.Equal(t, "relevant", run.AttrOr("data-mark", ""), "the newest mark")
	require.Equal(t, runPath, run.Find(`[data-testid="paper-run-link"]`).AttrOr("href", ""))
	require.Equal(t, "sleep and memory consolidation", strings.TrimSpace(run.Find(`[data-testid="paper-run-link"]`).Text()))
	require.Equal(t, "the key <paper>", run.Find(`[data-testid="paper-run-note"]`).Text())
	require.Contains(t, run.Text(), "by api")

	// The same page with the ID's slashes as they are.
	res, doc2 := w.get(t, w.client, "/library/papers/"+p.ID)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, p.ID, doc2.Find(`[data-testid="paper-id"]`).Text())

	// /runs counts the papers the run showed.
	_, list := w.get(t, w.client, "/runs")
	require.Equal(t, fmt.Sprint(len(shown)), list.Find(`[data-testid="runs-row"][data-run-id="`+runID+`"] [data-testid="runs-papers"]`).Text())

	// A javascript: link is not made; a paper no run showed says so.
	_, doc = w.get(t, w.client, views.PaperURL(papers[1].ID))
	href := doc.Find(`[data-testid="paper-url"]`).AttrOr("href", "")
	require.NotContains(t, href, "javascript")
	if !strings.Contains(strings.Join(shown, " "), papers[1].ID) {
		require.Equal(t, 1, doc.Find(`[data-testid="paper-runs-none"]`).Length())
	}

	for _, id := range []string{"doi:10.5555/nope", "nope", "doi%3A10.5555%2Fnope"} {
		res, doc := w.get(t, w.client, "/library/papers/"+id)
		require.Equal(t, http.StatusNotFound, res.StatusCode, id)
		require.Equal(t, "404", doc.Find(`[data-testid="error"]`).AttrOr("data-status", ""), id)
		require.Equal(t, 1, doc.Find(`[data-testid="error-home-link"]`).Length(), "the house error page")
	}
}
