package handlers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// TestExportCarriesMarksAndNotes drives a run to completion with one paper
// marked relevant (with a note) and one irrelevant, then downloads the run
// in every export format and reads each file back as a reference manager
// would: the marks and notes must survive, and the final collection must
// leave the rejected paper out.
func TestExportCarriesMarksAndNotes(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	postJSON := func(path string, body any) *http.Response {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		res, err := w.client.Post(w.srv.URL+path, "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	res := postJSON("/api/runs", map[string]any{"question": "sleep and memory consolidation", "max_iterations": 1, "strategy_checkpoint": false, "sources": testapp.Sources})
	require.Equal(t, http.StatusCreated, res.StatusCode)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	st := w.waitFor(t, created.ID, "waiting")
	var payload struct {
		Collection struct {
			Papers []struct{ ID, Title string } `json:"papers"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &payload))
	require.GreaterOrEqual(t, len(payload.Collection.Papers), 3)
	keep, drop := payload.Collection.Papers[0], payload.Collection.Papers[1]

	download := func(query string) (int, []byte) {
		t.Helper()
		r, err := w.client.Get(w.srv.URL + "/api/runs/" + created.ID + "/export?" + query)
		require.NoError(t, err)
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		return r.StatusCode, b
	}
	code, _ := download("format=ris&set=final")
	require.Equal(t, http.StatusUnprocessableEntity, code, "no final collection while the run waits")
	// Both refusals name exactly the formats the export writes.
	formatsError := func(body []byte) string {
		t.Helper()
		var e handlers.ErrorBody
		require.NoError(t, json.Unmarshal(body, &e), string(body))
		return e.Error.Message + " " + e.Error.Fields["format"]
	}
	code, body := download("set=review")
	require.Equal(t, http.StatusUnprocessableEntity, code, "a format is required")
	require.Contains(t, formatsError(body), strings.Join(biblio.Formats, ", "))
	code, body = download("format=docx")
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Contains(t, formatsError(body), strings.Join(biblio.Formats, ", "))

	res = postJSON("/api/runs/"+created.ID+"/decisions", map[string]any{"checkpoint_id": st.Checkpoint.ID, "action": "approve",
		"revised_data": map[string]any{"marked_relevant": []string{keep.ID}, "marked_irrelevant": []string{drop.ID}, "free_text_feedback": "",
			"paper_notes": map[string]string{keep.ID: "include; primary outcome", drop.ID: "animal study"}}})
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	w.waitFor(t, created.ID, "completed")

	for _, format := range biblio.Formats {
		code, body := download("format=" + format)
		require.Equal(t, http.StatusOK, code, format)
		in, err := codecs.NewReader(bytes.NewReader(body), "export", codecs.Options{})
		require.NoError(t, err, format)
		require.Equal(t, format, in.Format)
		got := map[string]biblio.Record{}
		for {
			r, err := in.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			require.Empty(t, r.Problem, format)
			got[r.Paper.Title] = r
		}
		require.Contains(t, got, keep.Title, format)
		require.Equal(t, biblio.Relevant, got[keep.Title].Mark, format)
		require.Equal(t, "include; primary outcome", got[keep.Title].Note, format)
		require.NotContains(t, got, drop.Title, "%s: the final collection leaves out what was marked irrelevant", format)

		code, body = download("set=accumulated&format=" + format)
		require.Equal(t, http.StatusOK, code)
		in, err = codecs.NewReader(bytes.NewReader(body), "export", codecs.Options{})
		require.NoError(t, err)
		r, err := in.Next()
		require.NoError(t, err)
		require.Equal(t, keep.Title, r.Paper.Title, "%s: accumulated holds the paper marked relevant", format)
		_, err = in.Next()
		require.ErrorIs(t, err, io.EOF)
	}
}
