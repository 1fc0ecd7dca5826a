package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStaleReviewFormKeepsNewerMarks: Grace's review page was drawn before
// Ada marked a paper relevant; Grace marks another paper and iterates
// without JavaScript. Her form still shows Ada's paper as unsure, but
// only what Grace changed is saved: Ada's mark stays, in the marks and in
// the decision. A paper Grace did change is saved, and an unchanged form
// after a 422 still saves the changes it carried.
func TestStaleReviewFormKeepsNewerMarks(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "3")
	runID := strings.TrimPrefix(runPath, "/runs/")
	ids := paperIDs(doc)
	require.GreaterOrEqual(t, len(ids), 2)
	form := formValues(doc.Find(`form[data-testid="review-form"]`))
	require.Equal(t, "unsure", form.Get("mark:"+ids[0]), "the page was drawn with the paper unsure")

	w.putMark(t, runID, ids[0], "relevant", "") // Ada, after Grace's page was drawn
	form.Set("mark:"+ids[1], "irrelevant")      // Grace's own change
	form.Set("op", "keep")
	res, _ := w.post(t, w.client, strings.Replace(doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), "&amp;", "&", -1), form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	marks := w.storedMarks(t, runID)
	require.Equal(t, "relevant", marks[ids[0]], "Ada's newer mark is not overwritten by Grace's stale unsure")
	require.Equal(t, "irrelevant", marks[ids[1]], "what Grace changed is saved")
}
