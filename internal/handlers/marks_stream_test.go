package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEventsStreamCarriesMarks (issue 16, "streams to everyone viewing
// the run"): a mark stored through the API, and the marks a review
// decision stores, reach the run's event stream as "mark" messages with
// the paper, mark, note, reason, who and the review's checkpoint, which
// the other pages set in place. On the old code the stream carried a
// mark only as a rendered progress line, and a decision's marks not at
// all.
func TestEventsStreamCarriesMarks(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runID, ids := markRun(t, w, false)
	cp := w.waitFor(t, runID, "waiting").Checkpoint

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.srv.URL+"/runs/"+runID+"/events", nil)
	require.NoError(t, err)
	res, err := (&http.Client{}).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	require.Equal(t, http.StatusOK, res.StatusCode)
	frames := make(chan sseFrame, 64)
	go readSSE(bufio.NewReader(res.Body), frames)
	require.Equal(t, "connected", next(t, frames, time.After(5*time.Second)).comment)
	require.Equal(t, "state", next(t, frames, time.After(5*time.Second)).event)

	// streamMark is a mark message as a page reads it.
	type streamMark struct {
		PaperID      string `json:"paper_id"`
		Mark         string `json:"mark"`
		Note         string `json:"note"`
		Reason       string `json:"reason"`
		By           string `json:"marked_by"`
		CheckpointID string `json:"checkpoint_id"`
	}
	// nextMark skips progress lines and pings up to the next mark.
	nextMark := func() streamMark {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			f := next(t, frames, deadline)
			if f.event != "mark" {
				continue
			}
			var m streamMark
			require.NoError(t, json.Unmarshal([]byte(f.data), &m))
			return m
		}
	}

	put := w.doJSON(t, http.MethodPut, markPath(runID, ids[0]), map[string]string{"mark": "irrelevant", "note": "rats", "reason": "population", "marked_by": "Grace"})
	require.Equal(t, http.StatusOK, put.StatusCode)
	m := nextMark()
	require.Equal(t, ids[0], m.PaperID)
	require.Equal(t, "irrelevant", m.Mark)
	require.Equal(t, "rats", m.Note)
	require.Equal(t, "population", m.Reason)
	require.Equal(t, "Grace", m.By)
	require.Equal(t, cp.ID, m.CheckpointID)

	// A decision carrying marks stores them, and says so on the stream
	// before the run moves on.
	dec := w.doJSON(t, http.MethodPost, "/api/runs/"+runID+"/decisions", map[string]any{"checkpoint_id": cp.ID, "action": "approve",
		"decided_by": "Ada", "revised_data": map[string]any{"marked_relevant": []string{ids[1]}, "paper_notes": map[string]string{ids[1]: "key paper"}}})
	require.Equal(t, http.StatusAccepted, dec.StatusCode)
	m = nextMark()
	require.Equal(t, ids[1], m.PaperID)
	require.Equal(t, "relevant", m.Mark)
	require.Equal(t, "key paper", m.Note)
	require.Equal(t, "Ada", m.By)
	require.Equal(t, cp.ID, m.CheckpointID)
}
