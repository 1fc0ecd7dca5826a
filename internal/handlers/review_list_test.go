package handlers_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
)

// reviewPaper is a paper as the review list shows it.
type reviewPaper struct {
	ID, Title, Group string
	Year             int
	Sources          []string
	Mark             string
}

// listedPapers reads the papers a review page (or list fragment) shows,
// in order.
func listedPapers(doc *goquery.Document) []reviewPaper {
	var out []reviewPaper
	doc.Find(`[data-testid="paper"]`).Each(func(_ int, s *goquery.Selection) {
		p := reviewPaper{ID: s.AttrOr("data-paper-id", ""), Title: strings.TrimSpace(s.Find(`[data-testid="paper-title"]`).Text()),
			Group: strings.TrimSpace(s.Closest(`[data-testid="paper-group"]`).Find(`[data-testid="group-label"]`).Text()),
			Mark:  s.Find(`input[type="radio"][checked]`).AttrOr("value", "")}
		s.Find(`[data-testid="source-badge"]`).Each(func(_ int, b *goquery.Selection) { p.Sources = append(p.Sources, b.Text()) })
		meta := s.Find(`[data-testid="paper-summary"] p.hint`).First().Text()
		if i := strings.LastIndex(meta, "· 20"); i >= 0 {
			p.Year, _ = strconv.Atoi(strings.TrimSpace(meta[i+len("· ") : i+len("· ")+4]))
		}
		out = append(out, p)
	})
	return out
}

func ids(ps []reviewPaper) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// putMark marks a paper through the API.
func (w *web) putMark(t *testing.T, runID, paperID, mark, note string) {
	t.Helper()
	res := w.doJSON(t, http.MethodPut, markPath(runID, paperID), map[string]string{"mark": mark, "note": note})
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// storedMarks is each marked paper's current mark, by the API.
func (w *web) storedMarks(t *testing.T, runID string) map[string]string {
	t.Helper()
	res := w.doJSON(t, http.MethodGet, "/api/runs/"+runID+"/marks", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got handlers.MarksJSON
	require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
	out := map[string]string{}
	for _, m := range got.Marks {
		out[m.PaperID] = m.Mark
	}
	return out
}

// TestReviewListPages: the review list shows one page at a time with its
// position; the pages together are the whole review, once each, in the
// order of the unpaged list; the page links and the form's actions keep
// the query; a page past the end shows the last.
func TestReviewListPages(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	whole := listedPapers(doc)
	require.Len(t, whole, 8, "the test library's papers, all on the first page of 50")
	require.Equal(t, "Papers 1–8 of 8", doc.Find(`[data-testid="list-position"]`).First().Text())
	require.Zero(t, doc.Find(`[data-testid="list-next"]`).Length())

	var paged []reviewPaper
	next := runPath + "?per_page=3"
	for page := 1; next != ""; page++ {
		_, doc := w.get(t, w.client, next)
		ps := listedPapers(doc)
		require.LessOrEqual(t, len(ps), 3)
		first := (page-1)*3 + 1
		require.Equal(t, "Papers "+strconv.Itoa(first)+"–"+strconv.Itoa(first+len(ps)-1)+" of 8",
			doc.Find(`[data-testid="list-position"]`).First().Text())
		require.Equal(t, "page "+strconv.Itoa(page)+" of 3", doc.Find(`[data-testid="list-page"]`).First().Text())
		action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")
		require.Contains(t, action, "per_page=3", "the form's answer shows the same page")
		if page > 1 {
			require.Contains(t, action, "page="+strconv.Itoa(page))
		}
		paged = append(paged, ps...)
		next = doc.Find(`[data-testid="list-next"]`).First().AttrOr("href", "")
		if next != "" {
			a := doc.Find(`[data-testid="list-next"]`).First()
			require.Equal(t, next, a.AttrOr("hx-get", ""))
			require.Equal(t, "true", a.AttrOr("hx-push-url", ""), "htmx puts the page in the address")
			require.Equal(t, "#review-list", a.AttrOr("hx-target", ""))
		}
	}
	require.Equal(t, ids(whole), ids(paged), "three pages: the whole review once, in order")

	require.Equal(t, runPath+"?page=2&per_page=3", func() string {
		_, doc := w.get(t, w.client, runPath+"?per_page=3&page=2")
		return doc.Find(`[data-page-url]`).AttrOr("data-page-url", "")
	}(), "the page's own address keeps the list, for a form answered in place")

	_, doc = w.get(t, w.client, runPath+"?per_page=3&page=99")
	require.Equal(t, ids(whole[6:]), ids(listedPapers(doc)), "past the end: the last page")
	require.Equal(t, "page 3 of 3", doc.Find(`[data-testid="list-page"]`).First().Text())
}

// TestReviewListSortFilter: sort by title, year, score and mark; filter
// by mark, source, theme and year; the controls are a GET form showing
// the selection; an htmx request for the list answers the list alone.
func TestReviewListSortFilter(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	whole := listedPapers(doc)
	require.Len(t, whole, 8)

	controls := doc.Find(`form[data-testid="review-controls"]`)
	require.Equal(t, "get", controls.AttrOr("method", ""))
	require.Equal(t, runPath, controls.AttrOr("action", ""))
	require.Equal(t, "true", controls.AttrOr("hx-push-url", ""))
	require.Zero(t, controls.Closest("form[method=post]").Length(), "not inside the review form")

	_, doc = w.get(t, w.client, runPath+"?sort=title")
	titles := []string{}
	for _, p := range listedPapers(doc) {
		titles = append(titles, strings.ToLower(p.Title))
	}
	require.Len(t, titles, 8)
	require.True(t, slices.IsSorted(titles), "%v", titles)
	require.Equal(t, "title", doc.Find(`[data-testid="list-sort"] option[selected]`).AttrOr("value", ""), "the control shows the sort")

	_, doc = w.get(t, w.client, runPath+"?sort=year")
	years := []int{}
	for _, p := range listedPapers(doc) {
		years = append(years, p.Year)
	}
	require.Len(t, years, 8)
	require.True(t, slices.IsSortedFunc(years, func(a, b int) int { return b - a }), "newest first: %v", years)

	_, doc = w.get(t, w.client, runPath+"?sort=score")
	var scores []float64
	doc.Find(`[data-testid="paper-score"]`).Each(func(_ int, s *goquery.Selection) {
		f, err := strconv.ParseFloat(strings.TrimPrefix(s.Text(), "score "), 64)
		require.NoError(t, err)
		scores = append(scores, f)
	})
	require.True(t, slices.IsSortedFunc(scores, func(a, b float64) int { return int((b - a) * 1e6) }), "%v", scores)

	// Filters.
	_, doc = w.get(t, w.client, runPath+"?source=mirror")
	mirror := listedPapers(doc)
	require.NotEmpty(t, mirror)
	require.Less(t, len(mirror), 8)
	for _, p := range mirror {
		require.Contains(t, p.Sources, "mirror")
	}
	require.Contains(t, doc.Find(`[data-testid="list-position"]`).First().Text(), "matching (8 under review)")
	require.Equal(t, "mirror", doc.Find(`[data-testid="list-source"] option[selected]`).AttrOr("value", ""))

	year := whole[0].Year
	_, doc = w.get(t, w.client, runPath+"?year="+strconv.Itoa(year))
	for _, p := range listedPapers(doc) {
		require.Equal(t, year, p.Year)
	}
	require.NotEmpty(t, listedPapers(doc))

	theme := whole[0].Group
	_, doc = w.get(t, w.client, runPath+"?theme="+url.QueryEscape(theme))
	var inTheme []string
	for _, p := range whole {
		if p.Group == theme {
			inTheme = append(inTheme, p.ID)
		}
	}
	require.Equal(t, inTheme, ids(listedPapers(doc)))

	// Marks: filter and sort by the stored marks.
	w.putMark(t, runID, whole[3].ID, "relevant", "")
	w.putMark(t, runID, whole[5].ID, "irrelevant", "")
	_, doc = w.get(t, w.client, runPath+"?mark=relevant")
	require.Equal(t, []string{whole[3].ID}, ids(listedPapers(doc)))
	require.Equal(t, "relevant", listedPapers(doc)[0].Mark)
	_, doc = w.get(t, w.client, runPath+"?mark=unsure")
	require.Len(t, listedPapers(doc), 6, "not screened: neither relevant nor irrelevant")
	_, doc = w.get(t, w.client, runPath+"?sort=mark")
	sorted := ids(listedPapers(doc))
	require.Equal(t, []string{whole[3].ID, whole[5].ID}, sorted[6:], "not screened first, then relevant, then irrelevant")

	// Nothing matches: said, not an empty page.
	_, doc = w.get(t, w.client, runPath+"?year=1900")
	require.Empty(t, listedPapers(doc))
	require.Contains(t, doc.Find(`[data-testid="list-position"]`).First().Text(), "No paper matches")

	// htmx swaps the list only: the answer is the list, with the query.
	res, doc := w.htmxTarget(t, runPath+"?sort=title&mark=&source=&theme=&year=&per_page=3", "review-list")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, runPath+"?per_page=3&sort=title", res.Header.Get("HX-Push-Url"), "the list's own address, without empty fields")
	require.Zero(t, doc.Find(`[data-testid="run-question"]`).Length(), "not the whole page")
	require.Equal(t, 1, doc.Find(`#review-list`).Length())
	require.Len(t, listedPapers(doc), 3)

	// Unknown values fall back to the default list.
	_, doc = w.get(t, w.client, runPath+"?sort=nonsense&mark=maybe&page=x&per_page=0")
	require.Equal(t, ids(whole), ids(listedPapers(doc)))
}

// htmxTarget GETs path as htmx does for an element whose hx-target is
// #target.
func (w *web) htmxTarget(t *testing.T, path, target string) (*http.Response, *goquery.Document) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.srv.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Target", target)
	res, err := w.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// TestReviewPageSubmitKeepsOtherPages: a decision submitted from one page
// of the review sends only that page's marks, and the papers marked on
// other pages keep their stored marks and count in the decision.
func TestReviewPageSubmitKeepsOtherPages(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, _ := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	_, doc := w.get(t, w.client, runPath+"?per_page=3&page=2")
	page2 := listedPapers(doc)
	w.putMark(t, runID, page2[0].ID, "irrelevant", "off topic")
	w.putMark(t, runID, page2[1].ID, "relevant", "")

	_, doc = w.get(t, w.client, runPath+"?per_page=3")
	page1 := listedPapers(doc)
	form := doc.Find(`form[data-testid="review-form"]`)
	v := formValues(form)
	for k := range v {
		if id, ok := strings.CutPrefix(k, "mark:"); ok {
			require.True(t, slices.Contains(ids(page1), id), "the form sends only its page's marks")
		}
	}
	v.Set("mark:"+page1[0].ID, "relevant")
	v.Set("action", "approve")
	res, _ := w.post(t, w.client, form.AttrOr("action", ""), v)
	require.Equal(t, http.StatusOK, res.StatusCode)
	st := w.waitFor(t, runID, "completed")

	marks := w.storedMarks(t, runID)
	require.Equal(t, "irrelevant", marks[page2[0].ID], "not reset by page 1's submit")
	require.Equal(t, "relevant", marks[page2[1].ID])
	require.Equal(t, "relevant", marks[page1[0].ID])
	require.NotNil(t, st.Collection)
	require.Equal(t, 2, st.Collection.Counts.Relevant, "the decision used the stored marks of page 2")
	require.Equal(t, 1, st.Collection.Counts.Irrelevant)
	fb := st.History[0].Feedback
	require.NotNil(t, fb)
	require.ElementsMatch(t, []string{page1[0].ID, page2[1].ID}, fb.MarkedRelevant)
	require.Equal(t, []string{page2[0].ID}, fb.MarkedIrrelevant)
}

// TestMarkRest: "mark the rest of this page irrelevant" asks first
// without JavaScript, then marks every paper of the page not screened yet
// (no mark or unsure, notes kept), none elsewhere, and offers Undo, which
// marks them unsure again, except a paper marked since; the history keeps
// every event.
func TestMarkRest(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, _ := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	_, doc := w.get(t, w.client, runPath+"?per_page=3&sort=title")
	page := listedPapers(doc)
	require.Len(t, page, 3)
	w.putMark(t, runID, page[0].ID, "relevant", "")
	w.putMark(t, runID, page[1].ID, "unsure", "check the dose")
	_, doc = w.get(t, w.client, runPath+"?per_page=3&sort=title")
	button := doc.Find(`[data-testid="mark-rest"]`)
	require.Equal(t, 1, button.Length())
	require.Equal(t, "Mark the rest of this page irrelevant", strings.TrimSpace(button.Text()))
	require.Contains(t, button.AttrOr("hx-confirm", ""), "Mark every paper on this page not screened yet")
	rest := button.AttrOr("formaction", "")
	require.Contains(t, rest, "/rest?")
	require.Contains(t, rest, "per_page=3")
	require.Equal(t, rest, button.AttrOr("hx-post", ""))

	// Without JavaScript: the question first, nothing marked.
	v := formValues(doc.Find(`form[data-testid="review-form"]`))
	res, doc := w.post(t, w.client, rest, v)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 1, doc.Find(`[data-testid="rest-confirm"]`).Length())
	require.Contains(t, doc.Find(`[data-testid="rest-confirm"]`).Text(), "Mark the 2 papers")
	require.Equal(t, ids(page), ids(listedPapers(doc)), "the same page")
	before := w.storedMarks(t, runID)
	require.Len(t, before, 2)

	// Confirmed: the two not screened are irrelevant; the note is kept.
	yes := doc.Find(`[data-testid="rest-confirm-yes"]`)
	v = formValues(doc.Find(`form[data-testid="review-form"]`))
	v.Set(yes.AttrOr("name", ""), yes.AttrOr("value", ""))
	res, doc = w.post(t, w.client, yes.AttrOr("formaction", ""), v)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, runPath, res.Request.URL.Path, "redirected to the page (no POST address)")
	require.Equal(t, "3", res.Request.URL.Query().Get("per_page"))
	require.NotEmpty(t, res.Request.URL.Query().Get("undo"))
	marks := w.storedMarks(t, runID)
	require.Equal(t, "relevant", marks[page[0].ID])
	require.Equal(t, "irrelevant", marks[page[1].ID])
	require.Equal(t, "irrelevant", marks[page[2].ID])
	require.Len(t, marks, 3, "no paper of another page marked")
	h, err := w.app.Store().MarkHistory(context.Background(), runID, page[1].ID)
	require.NoError(t, err)
	require.Equal(t, "check the dose", h[len(h)-1].Note)
	undo := doc.Find(`[data-testid="rest-undo"]`)
	require.Contains(t, undo.Text(), "Marked 2 papers irrelevant.")
	require.Zero(t, doc.Find(`[data-testid="mark-rest"]`).Length(), "nothing left to mark on this page")

	// Undo restores them, as a new batch of marks.
	ub := undo.Find(`[data-testid="rest-undo-button"]`)
	v = formValues(doc.Find(`form[data-testid="review-form"]`))
	v.Set(ub.AttrOr("name", ""), ub.AttrOr("value", ""))
	res, doc = w.post(t, w.client, ub.AttrOr("formaction", ""), v)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Empty(t, res.Request.URL.Query().Get("undo"))
	require.Zero(t, doc.Find(`[data-testid="rest-undo"]`).Length())
	marks = w.storedMarks(t, runID)
	require.Equal(t, map[string]string{page[0].ID: "relevant", page[1].ID: "unsure", page[2].ID: "unsure"}, marks)
	h, err = w.app.Store().MarkHistory(context.Background(), runID, page[1].ID)
	require.NoError(t, err)
	require.Equal(t, []string{"unsure", "irrelevant", "unsure"}, []string{h[0].Mark, h[1].Mark, h[2].Mark})
	require.Equal(t, "check the dose", h[2].Note)
	h, err = w.app.Store().MarkHistory(context.Background(), runID, page[2].ID)
	require.NoError(t, err)
	require.Len(t, h, 2, "marked by the batch, restored by the undo")

	// With htmx: confirmed in the browser; the answer is the list. A
	// paper marked after the batch keeps that mark through the undo.
	v = formValues(doc.Find(`form[data-testid="review-form"]`))
	v.Set("confirm", "yes")
	res, doc = w.htmxForm(t, rest, v, "review-list")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Zero(t, doc.Find(`[data-testid="run-question"]`).Length(), "the list, not the page")
	ub = doc.Find(`[data-testid="rest-undo-button"]`)
	require.Equal(t, 1, ub.Length())
	w.putMark(t, runID, page[2].ID, "relevant", "")
	v = formValues(doc.Find(`#review-list`))
	v.Set("_csrf", csrf(doc))
	v.Set("undo_at", ub.AttrOr("value", ""))
	_, doc = w.get(t, w.client, runPath)
	v.Set("_csrf", csrf(doc))
	res, _ = w.htmxForm(t, ub.AttrOr("hx-post", ""), v, "review-list")
	require.Equal(t, http.StatusOK, res.StatusCode)
	marks = w.storedMarks(t, runID)
	require.Equal(t, "unsure", marks[page[1].ID])
	require.Equal(t, "relevant", marks[page[2].ID], "marked since the batch: not undone")

	// A bad batch is refused with the field named.
	v.Set("undo_at", "yesterday")
	res, _ = w.htmxForm(t, ub.AttrOr("hx-post", ""), v, "review-list")
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
}

// htmxForm POSTs form as htmx does for an element whose hx-target is
// #target, following redirects as the browser's XHR does.
func (w *web) htmxForm(t *testing.T, path string, form url.Values, target string) (*http.Response, *goquery.Document) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Target", target)
	res, err := w.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

// TestRunPageRenderedOnceHoldsEachPersonsToken: the run page is rendered
// once for everyone who views it, but each person's copy carries that
// person's own CSRF token (the one their other pages carry), which their
// form posts are accepted with.
func TestRunPageRenderedOnceHoldsEachPersonsToken(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, first := w.startReview(t, "3")
	grace := newClient(t)
	w.signIn(t, grace, "Grace")
	for _, c := range []*http.Client{w.client, grace} {
		_, home := w.get(t, c, "/")
		_, doc := w.get(t, c, runPath)
		require.Equal(t, csrf(home), csrf(doc), "the person's own token")
		doc.Find(`input[name="_csrf"]`).Each(func(_ int, s *goquery.Selection) {
			require.Equal(t, csrf(home), s.AttrOr("value", ""))
		})
	}
	_, doc := w.get(t, grace, runPath)
	require.NotEqual(t, csrf(first), csrf(doc), "two people, two tokens")

	// Grace's token from the shared page is accepted for her mark.
	id := listedPapers(doc)[0].ID
	action := strings.Replace(doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), "/review", "/marks", 1)
	res, _ := w.post(t, grace, action, url.Values{"_csrf": {csrf(doc)}, "mark:" + id: {"relevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "relevant", w.storedMarks(t, strings.TrimPrefix(runPath, "/runs/"))[id])
}

// TestReadsBetweenMarksFollowThem: the run page and its JSON, read in
// turn between marks (each read building on what the stamp before built),
// always show every mark made so far.
func TestReadsBetweenMarksFollowThem(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	ps := listedPapers(doc)
	want := map[string]string{}
	for i, p := range ps[:6] {
		mark := []string{"relevant", "irrelevant"}[i%2]
		w.putMark(t, runID, p.ID, mark, "")
		want[p.ID] = mark
		if i%3 == 2 {
			continue // two marks between reads
		}
		if i%2 == 0 {
			_, doc := w.get(t, w.client, runPath)
			for _, p := range listedPapers(doc) {
				require.Equal(t, cmp.Or(want[p.ID], "unsure"), p.Mark, "page after mark %d", i)
			}
			continue
		}
		res := w.doJSON(t, http.MethodGet, "/api/runs/"+runID, nil)
		var run handlers.RunJSON
		require.NoError(t, json.NewDecoder(res.Body).Decode(&run))
		for _, p := range run.Collection.Papers {
			require.Equal(t, want[p.ID], p.Mark, "API after mark %d", i)
		}
		relevant := 0
		for _, m := range want {
			if m == "relevant" {
				relevant++
			}
		}
		require.Equal(t, relevant, run.Collection.Counts.Relevant)
	}
}
