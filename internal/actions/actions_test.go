package actions_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/actions"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/notify"
)

var papers = []map[string]any{
	{"id": "p1", "title": "Bees and their keepers", "authors": []any{"Ada Lovelace"}, "year": float64(2021), "doi": "10.1/bees"},
	{"id": "p2", "title": "Ants", "year": float64(2019)},
}

func TestExportWritesTheFileInTheDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "exports")
	r := &actions.Runner{ExportDir: dir}
	ctx := context.Background()
	res, err := r.Export(ctx, flow.Export{RunID: "run1", Stage: "save", Papers: papers})
	require.NoError(t, err)
	require.Equal(t, flow.ExportResult{Path: filepath.Join(dir, "run1-save.ris"), Count: 2, Format: "ris"}, res)
	b, err := os.ReadFile(res.Path)
	require.NoError(t, err)
	require.Contains(t, string(b), "TI  - Bees and their keepers")
	require.Contains(t, string(b), "DO  - 10.1/bees")
	require.Contains(t, string(b), "TI  - Ants")

	res, err = r.Export(ctx, flow.Export{RunID: "run1", Stage: "save", Papers: papers[:1], Format: "bibtex", File: "kept.bib"})
	require.NoError(t, err)
	require.Equal(t, 1, res.Count)
	b, err = os.ReadFile(filepath.Join(dir, "kept.bib"))
	require.NoError(t, err)
	require.Contains(t, string(b), "Bees and their keepers")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary file is left")
}

func TestExportRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	r := &actions.Runner{ExportDir: filepath.Join(base, "exports")}
	ctx := context.Background()
	for _, name := range []string{"../escape.ris", "a/b.ris", "..", ".hidden", "/etc/passwd", `..\x.ris`} {
		_, err := r.Export(ctx, flow.Export{RunID: "r", Stage: "s", Papers: papers, File: name})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), name)
	}
	_, err := os.Stat(filepath.Join(base, "escape.ris"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = r.Export(ctx, flow.Export{RunID: "r", Stage: "s", Papers: papers, Format: "docx"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	_, err = (&actions.Runner{}).Export(ctx, flow.Export{RunID: "r", Stage: "s", Papers: papers})
	require.ErrorContains(t, err, "QUARRY_EXPORT_DIR")
}

func TestNotifyAndSnapshotGoThroughTheirSenders(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		got <- string(b[:n])
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	sender := &notify.Sender{Hosts: []string{u.Host}}
	r := &actions.Runner{Send: sender.Send, Backup: func(_ context.Context, runID string) (string, int64, error) {
		return "/backups/" + runID + ".db", 8192, nil
	}}
	ctx := context.Background()
	require.NoError(t, r.Notify(ctx, flow.Message{Webhook: srv.URL + "/hook", Text: "done"}))
	require.Equal(t, `{"text":"done"}`, <-got)
	snap, err := r.Snapshot(ctx, "run1")
	require.NoError(t, err)
	require.Equal(t, flow.SnapshotResult{Path: "/backups/run1.db", Bytes: 8192}, snap)
	_, err = (&actions.Runner{}).Snapshot(ctx, "run1")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Equal(t, fault.EInvalid, fault.ErrorCode((&actions.Runner{}).Notify(ctx, flow.Message{Text: "x"})))
}
