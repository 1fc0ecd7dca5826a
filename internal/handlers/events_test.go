package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
)

// sseFrame is one dispatched server-sent event, or a comment line.
type sseFrame struct {
	event, data, comment string
}

// readSSE parses a text/event-stream into frames until the body ends.
func readSSE(body *bufio.Reader, out chan<- sseFrame) {
	defer close(out)
	var f sseFrame
	var data []string
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if f.event != "" || len(data) > 0 {
				f.data = strings.Join(data, "\n")
				out <- f
			}
			f, data = sseFrame{}, nil
		case strings.HasPrefix(line, ":"):
			out <- sseFrame{comment: strings.TrimSpace(strings.TrimPrefix(line, ":"))}
		case strings.HasPrefix(line, "event: "):
			f.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "data:":
			data = append(data, "")
		}
	}
}

// next waits for the stream's next frame, failing the test at the deadline
// so a stream that goes quiet cannot hang the suite.
func next(t *testing.T, frames <-chan sseFrame, deadline <-chan time.Time) sseFrame {
	t.Helper()
	select {
	case f, ok := <-frames:
		require.True(t, ok, "the stream ended early")
		return f
	case <-deadline:
		t.Fatal("no event before the deadline")
		return sseFrame{}
	}
}

// TestEventsStream: GET /runs/:id/events is a text/event-stream of rendered
// progress lines for that run only (none from another run working
// meanwhile), with a status ping when the run reaches a checkpoint, and the
// handler returns as soon as the client disconnects (well before the 15s
// keep-alive would notice a dead socket).
func TestEventsStream(t *testing.T) {
	t.Parallel()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}, app.WithWorkflows(reg))
	require.NoError(t, err)
	// Each finished event stream reports its path, so the test can see the
	// handler return after the client goes.
	streamEnded := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		a.Handler().ServeHTTP(rw, r)
		if strings.HasSuffix(r.URL.Path, "/events") {
			streamEnded <- r.URL.Path
		}
	}))
	t.Cleanup(func() { srv.Close(); require.NoError(t, a.Close()) })
	w := &web{srv: srv, client: newClient(t), app: a}

	start := func(confirm bool) string {
		t.Helper()
		b, err := json.Marshal(map[string]any{"question": "sleep and memory consolidation", "max_iterations": 2,
			"strategy_checkpoint": confirm, "sources": testapp.Sources})
		require.NoError(t, err)
		res, err := w.client.Post(srv.URL+"/api/runs", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusCreated, res.StatusCode)
		var created handlers.RunCreated
		require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
		return created.ID
	}

	t.Run("UnknownRun", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/runs/no-such-run/events", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		res, err := w.client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNotFound, res.StatusCode)
		require.NotContains(t, res.Header.Get("Content-Type"), "text/event-stream")
		select {
		case path := <-streamEnded:
			require.Equal(t, "/runs/no-such-run/events", path)
		case <-time.After(5 * time.Second):
			t.Fatal("the refused stream's handler never returned")
		}
	})

	// Run A waits, idle, at its strategy checkpoint while we watch it.
	runA := start(true)
	cp := w.waitFor(t, runA, "waiting").Checkpoint
	require.Equal(t, "strategy_confirmation", cp.Kind)

	ctx, disconnect := context.WithCancel(context.Background())
	defer disconnect()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/runs/"+runA+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	// No client timeout: the stream is meant to stay open; deadline bounds
	// each read instead.
	res, err := (&http.Client{}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	require.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
	frames := make(chan sseFrame, 64)
	go readSSE(bufio.NewReader(res.Body), frames)
	deadline := time.After(15 * time.Second)
	require.Equal(t, sseFrame{comment: "connected"}, next(t, frames, deadline), "the stream opens with a comment once subscribed")
	state := next(t, frames, deadline)
	require.Equal(t, "state", state.event, "the first message is the run's current state")
	require.JSONEq(t, `{"id":"`+runA+`","status":"waiting","iteration":1,"step":"confirm_strategy","checkpoint_id":"`+cp.ID+`"}`, state.data)

	// Run B goes all the way from parse to its review while A's stream is
	// open; none of B's events may reach A's stream.
	runB := start(false)
	require.Equal(t, "result_review", w.waitFor(t, runB, "waiting").Checkpoint.Kind)

	// Deciding A moves it through search … review; the stream shows it.
	b, err := json.Marshal(map[string]any{"checkpoint_id": cp.ID, "action": "approve", "decided_by": "Ada"})
	require.NoError(t, err)
	dres, err := w.client.Post(srv.URL+"/api/runs/"+runA+"/decisions", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	dres.Body.Close()
	require.Equal(t, http.StatusAccepted, dres.StatusCode)

	var lines []string
	statusPings := 0
	for {
		f := next(t, frames, deadline)
		if f.event == "status" {
			statusPings++
			continue
		}
		if f.event != "progress" {
			continue // keep-alive comments
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.data))
		require.NoError(t, err)
		li := doc.Find(`li[data-testid="progress-line"]`)
		require.Equal(t, 1, li.Length(), "each progress event is one rendered line: %q", f.data)
		lines = append(lines, li.Text())
		if strings.Contains(li.Text(), "waiting for a decision (result_review)") {
			break
		}
	}
	all := strings.Join(lines, "\n")
	// The decision's own event may trail the first steps it set off (the
	// worker can start before Decide publishes), so only its presence is
	// checked. Run B's events would have been queued before any of A's.
	require.Contains(t, all, "approve by Ada")
	require.Contains(t, all, "search started")
	require.Contains(t, all, "organize finished")
	for _, step := range []string{" parse ", " build "} {
		require.NotContains(t, all, step, "run B's steps leaked into run A's stream:\n%s", all)
	}
	require.Positive(t, statusPings, "a checkpoint sends a status ping so the page reloads its form")

	// The client goes; the handler must notice at once, not at the next
	// keep-alive write 15s later.
	disconnect()
	select {
	case path := <-streamEnded:
		require.Equal(t, "/runs/"+runA+"/events", path)
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream handler kept running after the client disconnected")
	}
}

// TestEventsStreamStartsWithState (issue 16, defect 3): a page drawn
// before its run reached a checkpoint connects after it did; the stream's
// first message is the current state, and since the page says (cp, s) it
// was drawn at another state, a status ping follows at once, so the page
// fetches its form without waiting for an event that was published before
// it connected. A page already showing the current state gets the state
// and no ping. On the old code the stream sent nothing until the run
// moved again.
func TestEventsStreamStartsWithState(t *testing.T) {
	t.Parallel()
	reg, err := testapp.Registry()
	require.NoError(t, err)
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}, app.WithWorkflows(reg))
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); require.NoError(t, a.Close()) })
	w := &web{srv: srv, client: newClient(t), app: a}
	b, err := json.Marshal(map[string]any{"question": "sleep and memory consolidation", "strategy_checkpoint": true, "sources": testapp.Sources})
	require.NoError(t, err)
	res, err := w.client.Post(srv.URL+"/api/runs", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	var created handlers.RunCreated
	require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
	res.Body.Close()
	cp := w.waitFor(t, created.ID, "waiting").Checkpoint

	// open connects as a page drawn with query and returns its frames
	// after the opening comment.
	open := func(query string) <-chan sseFrame {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/runs/"+created.ID+"/events"+query, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		res, err := (&http.Client{}).Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		require.Equal(t, http.StatusOK, res.StatusCode)
		frames := make(chan sseFrame, 16)
		go readSSE(bufio.NewReader(res.Body), frames)
		require.Equal(t, "connected", next(t, frames, time.After(5*time.Second)).comment)
		return frames
	}
	wantState := `{"id":"` + created.ID + `","status":"waiting","iteration":1,"step":"confirm_strategy","checkpoint_id":"` + cp.ID + `"}`

	for name, query := range map[string]string{"NoPage": "", "PageDrawnRunning": "?cp=&s=running"} {
		frames := open(query)
		state := next(t, frames, time.After(5*time.Second))
		require.Equal(t, "state", state.event, name)
		require.JSONEq(t, wantState, state.data, name)
		if name == "PageDrawnRunning" {
			require.Equal(t, "status", next(t, frames, time.After(5*time.Second)).event, "the page is told to fetch its new state")
		}
	}

	frames := open("?cp=" + cp.ID + "&s=waiting")
	require.Equal(t, "state", next(t, frames, time.After(5*time.Second)).event)
	select {
	case f := <-frames:
		require.Failf(t, "a page showing the current state got another message", "%+v", f)
	case <-time.After(300 * time.Millisecond):
	}
}
