package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// TestBusyDatabaseAnswers503: a write that meets another process's write
// lock for longer than the busy timeout answers 503 with Retry-After and
// the "unavailable" code, in the API and on pages, instead of a bare 500;
// once the lock is gone the same request succeeds. Before, it was a 500
// "internal error".
func TestBusyDatabaseAnswers503(t *testing.T) {
	t.Parallel()
	storetest.SkipOnPostgres(t, "the other process holds SQLite's write lock through OpenRaw (BEGIN IMMEDIATE); PostgreSQL's busy writer is store's TestPostgresBusyWriterTimesOut")
	reg, err := testapp.Registry()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "q.db")
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: path,
		Database: app.Database{BusyTimeout: 200 * time.Millisecond}}, app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	w := serveApp(t, a)
	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, home := w.get(t, c, "/")

	other, err := store.OpenRaw(path, "OFF") // another process, e.g. `quarry import`
	require.NoError(t, err)
	defer other.Close()
	lock, err := other.Begin() // BEGIN IMMEDIATE: the write lock
	require.NoError(t, err)
	_, err = lock.Exec(`DELETE FROM library_log WHERE seq < 0`)
	require.NoError(t, err)

	params := map[string]any{"question": "sleep and memory consolidation", "sources": testapp.Sources}
	res := w.postJSON(t, "/api/runs", params)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	require.Equal(t, "2", res.Header.Get("Retry-After"))
	var body handlers.ErrorBody
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Equal(t, "unavailable", body.Error.Code)
	require.Contains(t, body.Error.Message, "the database is busy")

	page, doc := w.post(t, c, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusServiceUnavailable, page.StatusCode)
	require.Equal(t, "2", page.Header.Get("Retry-After"))
	require.Contains(t, doc.Find(`[data-testid="error-message"]`).Text(), "the database is busy")

	require.NoError(t, lock.Rollback())
	w.startAPIRun(t, params)
}

// TestFullDiskAnswers507AndWorkResumes: when the database cannot grow (a
// full disk; here its size cap, which fails the same way), starting a run
// answers 507 naming the full disk, in the API and on pages; once space is
// freed every run started before reaches its checkpoint (none failed) and
// new runs start again. Before, the answer was a generic 500. (A real full
// disk also stops the queue from recording a failed job, which left runs
// stuck for 15 minutes; `make chaos` fills a real tmpfs to show that they
// now resume within seconds.)
func TestFullDiskAnswers507AndWorkResumes(t *testing.T) {
	t.Parallel()
	storetest.SkipOnPostgres(t, "the full disk is SQLite's max_page_count (Options.MaxBytes) over a zeroblob filler")
	reg, err := testapp.Registry()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "q.db")
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: path}
	a, err := newApp(t, context.Background(), cfg, app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	require.NoError(t, a.Close())

	// Something else fills the disk: 2 MiB the database holds, then a cap
	// just above its size.
	other, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Exec(`CREATE TABLE filler (b BLOB); INSERT INTO filler VALUES (zeroblob(2 << 20))`)
	require.NoError(t, err)
	var pages, pageSize int64
	require.NoError(t, other.QueryRow(`SELECT page_count, page_size FROM pragma_page_count, pragma_page_size`).Scan(&pages, &pageSize))
	cfg.Database.MaxBytes = pages*pageSize + 96<<10

	a, err = newApp(t, context.Background(), cfg, app.WithWorkflows(reg), app.WithoutDemoLibrary())
	require.NoError(t, err)
	w := serveApp(t, a)
	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, home := w.get(t, c, "/")

	params := map[string]any{"question": "sleep and memory consolidation", "sources": testapp.Sources, "strategy_checkpoint": false}
	var started []string
	var full *http.Response
	for range 200 {
		res := w.postJSON(t, "/api/runs", params)
		if res.StatusCode != http.StatusCreated {
			full = res
			break
		}
		var created handlers.RunCreated
		require.NoError(t, json.NewDecoder(res.Body).Decode(&created))
		started = append(started, created.ID)
	}
	require.NotNil(t, full, "the database never filled up")
	require.Equal(t, http.StatusInsufficientStorage, full.StatusCode)
	var body handlers.ErrorBody
	require.NoError(t, json.NewDecoder(full.Body).Decode(&body))
	require.Equal(t, "storage_full", body.Error.Code)
	require.Contains(t, body.Error.Message, "the disk holding the database is full")
	require.NotEmpty(t, started, "some runs started before the disk filled")

	page, doc := w.post(t, c, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusInsufficientStorage, page.StatusCode)
	require.True(t, strings.Contains(doc.Find(`[data-testid="error-message"]`).Text(), "the disk holding the database is full"))

	_, err = other.Exec(`DELETE FROM filler`) // the operator frees space
	require.NoError(t, err)
	for _, id := range started {
		w.waitFor(t, id, "waiting") // at its review checkpoint: nothing failed, nothing stuck
	}
	w.startAPIRun(t, params)
}
