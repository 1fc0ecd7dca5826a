package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// startReview starts a run through the form (no strategy checkpoint) and
// returns its path and the page at its first review.
func (w *web) startReview(t *testing.T, maxIterations string) (string, *goquery.Document) {
	t.Helper()
	w.signIn(t, w.client, "Ada")
	_, home := w.get(t, w.client, "/")
	res, _ := w.post(t, w.client, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"},
		"max_iterations": {maxIterations}, "sources": {"library", "mirror"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runPath := res.Request.URL.Path
	st := w.waitFor(t, strings.TrimPrefix(runPath, "/runs/"), "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	_, doc := w.get(t, w.client, runPath)
	return runPath, doc
}

func paperIDs(doc *goquery.Document) []string {
	return doc.Find(`[data-testid="paper"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") })
}

// TestReviewNotes: each paper has a labelled note input; notes are checked,
// kept on a failed submit, stored with the run, shown again at the next
// review, and cleared by submitting an empty note.
func TestReviewNotes(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	ids := paperIDs(doc)
	require.GreaterOrEqual(t, len(ids), 3)
	for _, id := range ids {
		in := doc.Find(`[data-paper-id="` + id + `"] [data-testid="paper-note"]`)
		require.Equal(t, 1, in.Length(), "one note input per paper")
		require.Equal(t, "note:"+id, in.AttrOr("name", ""))
		require.Equal(t, 1, doc.Find(`label[for="`+in.AttrOr("id", "")+`"]`).Length(), "the note input has a label")
		require.Contains(t, in.AttrOr("aria-label", ""), "Note on")
	}
	action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")
	rejectedTitle := strings.TrimSpace(doc.Find(`[data-paper-id="` + ids[2] + `"] [data-testid="paper-title"]`).Text())
	require.NotEmpty(t, rejectedTitle)

	// A note that is too long comes back with every value kept.
	bad := url.Values{"_csrf": {csrf(doc)}, "action": {"edit"}, "mark:" + ids[0]: {"relevant"},
		"note:" + ids[0]: {"fits; check n"}, "note:" + ids[1]: {strings.Repeat("x", research.MaxPaperNote+1)}}
	res, doc := w.post(t, w.client, action, bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.NotEmpty(t, doc.Find(`[data-field="paper_notes[`+ids[1]+`]"]`).Text())
	require.Equal(t, "fits; check n", doc.Find(`[data-paper-id="`+ids[0]+`"] [data-testid="paper-note"]`).AttrOr("value", ""))
	require.Equal(t, "relevant", doc.Find(`[data-paper-id="`+ids[0]+`"] input[checked]`).AttrOr("value", ""))

	good := url.Values{"_csrf": {csrf(doc)}, "action": {"edit"}, "mark:" + ids[0]: {"relevant"}, "mark:" + ids[2]: {"irrelevant"},
		"note:" + ids[0]: {"fits; check n"}, "note:" + ids[1]: {""}, "note:" + ids[2]: {"wrong population"}}
	res, _ = w.post(t, w.client, action, good)
	require.Equal(t, http.StatusOK, res.StatusCode)
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, 2, st.Iteration)
	require.Equal(t, map[string]string{ids[0]: "fits; check n", ids[2]: "wrong population"}, runNotes(t, w, runID))

	// The next review shows the kept notes; an emptied note is cleared.
	_, doc = w.get(t, w.client, runPath)
	next := map[string]bool{}
	for _, id := range paperIDs(doc) {
		next[id] = true
	}
	require.True(t, next[ids[0]], "the paper marked relevant is found again by the test library")
	require.Equal(t, "fits; check n", doc.Find(`[data-paper-id="`+ids[0]+`"] [data-testid="paper-note"]`).AttrOr("value", ""))
	form := url.Values{"_csrf": {csrf(doc)}, "action": {"approve"}, "mark:" + ids[0]: {"relevant"}, "note:" + ids[0]: {""}}
	res, _ = w.post(t, w.client, doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	w.waitFor(t, runID, "completed")
	require.Equal(t, map[string]string{ids[2]: "wrong population"}, runNotes(t, w, runID))

	// The completed page lists the rejected paper apart, with its note,
	// and not in the final collection.
	_, doc = w.get(t, w.client, runPath)
	final := doc.Find(`[data-testid="final-collection"]`)
	require.Equal(t, 1, final.Length())
	rejected := final.Find(`[data-testid="rejected-paper"]`)
	require.Equal(t, []string{ids[2]}, rejected.Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") }))
	require.Contains(t, rejected.Text(), "wrong population")
	titles := final.Find(`[data-testid="paper-title"]`).Map(func(_ int, s *goquery.Selection) string { return strings.TrimSpace(s.Text()) })
	require.NotEmpty(t, titles)
	require.NotContains(t, titles, rejectedTitle)
}

// runNotes reads the notes a run keeps on its papers from the store.
func runNotes(t *testing.T, w *web, runID string) map[string]string {
	t.Helper()
	run, err := w.app.Store().Run(context.Background(), runID)
	require.NoError(t, err)
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	return rs.Workflow.PaperNotes
}

// TestReviewEnterKeeps: the review form's first submit button, which Enter
// in a note presses, keeps the marks, notes and feedback and decides
// nothing, so Enter can never finish the run.
func TestReviewEnterKeeps(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	form := doc.Find(`form[data-testid="review-form"]`)
	first := form.Find(`button[type="submit"]`).First()
	require.Equal(t, "op", first.AttrOr("name", ""))
	require.Equal(t, "keep", first.AttrOr("value", ""), "Enter presses the keep button, not Approve and finish")

	ids := paperIDs(doc)
	vals := url.Values{"_csrf": {csrf(doc)}, "op": {"keep"}, "mark:" + ids[0]: {"relevant"}, "note:" + ids[0]: {"fits"},
		"free_text_feedback": {"more like the first"}}
	res, doc := w.post(t, w.client, form.AttrOr("action", ""), vals)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NotEmpty(t, doc.Find(`[data-testid="enter-notice"]`).Text())
	require.Equal(t, "fits", doc.Find(`[data-paper-id="`+ids[0]+`"] [data-testid="paper-note"]`).AttrOr("value", ""))
	require.Equal(t, "relevant", doc.Find(`[data-paper-id="`+ids[0]+`"] input[checked]`).AttrOr("value", ""))
	require.Equal(t, "more like the first", doc.Find(`textarea#feedback`).Text())
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	require.Equal(t, 1, st.Iteration)
}

// TestReviewConflictKeepsWhatWasTyped: a review submit that loses to
// someone else's decision (409) shows its feedback, marks and notes
// read-only in the conflict box, so the person can copy them.
func TestReviewConflictKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	ids := paperIDs(doc)
	title := strings.TrimSpace(doc.Find(`[data-paper-id="` + ids[1] + `"] [data-testid="paper-title"]`).Text())
	action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")
	token := csrf(doc)

	// Grace decides first, in her own session.
	grace := newClient(t)
	w.signIn(t, grace, "Grace")
	_, gdoc := w.get(t, grace, runPath)
	res, _ := w.post(t, grace, action, url.Values{"_csrf": {csrf(gdoc)}, "action": {"edit"}, "mark:" + ids[0]: {"relevant"}})
	require.Equal(t, http.StatusOK, res.StatusCode)

	stale := url.Values{"_csrf": {token}, "action": {"approve"}, "mark:" + ids[1]: {"irrelevant"}, "mark:" + ids[2]: {"unsure"},
		"note:" + ids[1]: {"wrong population; see table 2"}, "note:" + ids[2]: {""},
		"free_text_feedback": {"Prefer randomised trials.\nDrop animal studies."}}
	res, doc = w.post(t, w.client, action, stale)
	require.Equal(t, http.StatusConflict, res.StatusCode)
	box := doc.Find(`[data-testid="conflict"]`)
	require.Contains(t, box.Find(`[data-testid="conflict-message"]`).Text(), "Grace")
	fb := box.Find(`textarea[data-testid="submitted-feedback"]`)
	require.Equal(t, "Prefer randomised trials.\nDrop animal studies.", fb.Text())
	_, readonly := fb.Attr("readonly")
	require.True(t, readonly)
	papers := box.Find(`[data-testid="submitted-paper"]`)
	require.Equal(t, []string{ids[1]}, papers.Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-paper-id", "") }),
		"only papers with a mark or a note are listed")
	require.Contains(t, papers.Text(), title)
	require.Contains(t, papers.Text(), "marked irrelevant")
	require.Equal(t, "wrong population; see table 2", papers.Find(`[data-testid="submitted-note"]`).Text())
}

// TestReviewBadMarkRefused: a mark that is none of relevant, irrelevant or
// unsure is refused with 422 naming its field, instead of silently counting
// as unsure; every other value comes back as posted.
func TestReviewBadMarkRefused(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	ids := paperIDs(doc)
	action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")
	bad := url.Values{"_csrf": {csrf(doc)}, "action": {"edit"}, "mark:" + ids[0]: {"relevant"}, "mark:" + ids[1]: {"maybe"},
		"note:" + ids[1]: {"check the methods"}, "free_text_feedback": {"more trials"}}
	res, doc := w.post(t, w.client, action, bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	msg := doc.Find(`[data-testid="field-error"][data-field="mark:` + ids[1] + `"]`).Text()
	require.Contains(t, msg, `"maybe"`)
	require.Equal(t, "relevant", doc.Find(`[data-paper-id="`+ids[0]+`"] input[checked]`).AttrOr("value", ""))
	require.Equal(t, "check the methods", doc.Find(`[data-paper-id="`+ids[1]+`"] [data-testid="paper-note"]`).AttrOr("value", ""))
	require.Equal(t, "more trials", doc.Find(`textarea#feedback`).Text())
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	require.Equal(t, 1, st.Iteration, "nothing was decided")
}

// TestReviewFieldErrorsAreTiedToTheirInputs: as on the strategy form, a
// review that comes back with errors marks each invalid input
// aria-invalid, describes it by its error's text (by id), and puts the
// focus on the first invalid input in the page's order; the review form
// used to show the errors with no tie to their inputs.
func TestReviewFieldErrorsAreTiedToTheirInputs(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	_, doc := w.startReview(t, "3")
	ids := paperIDs(doc)
	require.GreaterOrEqual(t, len(ids), 3)
	action := doc.Find(`form[data-testid="review-form"]`).AttrOr("action", "")
	bad := url.Values{"_csrf": {csrf(doc)}, "action": {"edit"}, "mark:" + ids[0]: {"relevant"},
		"mark:" + ids[1]: {"maybe"}, "note:" + ids[2]: {strings.Repeat("x", research.MaxPaperNote+1)},
		"free_text_feedback": {strings.Repeat("y", 10_001)}}
	res, doc := w.post(t, w.client, action, bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	tied := func(field string, in *goquery.Selection) {
		t.Helper()
		require.Positive(t, in.Length(), field)
		errEl := doc.Find(`[data-testid="field-error"][data-field="` + field + `"]`)
		require.Equal(t, 1, errEl.Length(), field)
		errID := errEl.AttrOr("id", "")
		require.NotEmpty(t, errID, field)
		in.Each(func(_ int, s *goquery.Selection) {
			require.Equal(t, "true", s.AttrOr("aria-invalid", ""), field)
			require.Contains(t, strings.Fields(s.AttrOr("aria-describedby", "")), errID, field)
		})
	}
	tied("mark:"+ids[1], doc.Find(`[data-paper-id="`+ids[1]+`"] input[type="radio"]`))
	tied("paper_notes["+ids[2]+"]", doc.Find(`[data-paper-id="`+ids[2]+`"] [data-testid="paper-note"]`))
	tied("free_text_feedback", doc.Find(`textarea#feedback`))
	_, ok := doc.Find(`[data-paper-id="` + ids[0] + `"] [data-testid="paper-note"]`).Attr("aria-invalid")
	require.False(t, ok, "a valid input is not marked invalid")
	focus := doc.Find(`[autofocus]`)
	require.Equal(t, 1, focus.Length(), "one input has the focus")
	require.Equal(t, "mark:"+ids[1], focus.AttrOr("name", ""), "the first invalid input in the page's order")
}
