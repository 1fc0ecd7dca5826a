package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
)

// TestSearchOfALibrarySelection: a run of a project that asks for its
// library selection finds only the selected papers with the real local
// source, says so in its notes, and a run of the same question over the
// whole library finds the others too.
func TestSearchOfALibrarySelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}
	a, err := newApp(t, ctx, cfg, app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(cfg.Search, st, slog.New(slog.DiscardHandler))
	}))
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	st := a.Store()
	i := 0
	next := func() (library.Record, error) {
		if i == 24 {
			return library.Record{}, io.EOF
		}
		i++
		p := research.RawPaper{Title: fmt.Sprintf("Sleep and memory consolidation in study %d", i),
			Abstract: "Sleep after learning improves memory consolidation.", Year: 2000 + i%20, DOI: fmt.Sprintf("10.9/%d", i)}
		p.ID = research.StableID(p)
		return library.Record{Paper: p, Origin: "t.jsonl", Line: i}, nil
	}
	_, err = library.Import(ctx, st, next, library.ImportOptions{})
	require.NoError(t, err)
	all, err := st.BrowseLibrary(ctx, store.LibraryQuery{Limit: 50})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(all.Papers), 24, "ours, newest first, then the demo library's")
	now := time.Now().UTC()
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "ann", Email: "ann@example.org", Name: "Ann", CreatedAt: now}))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "pa", Name: "A", CreatedAt: now}, "ann"))
	selected := map[string]bool{}
	var ids []string
	for _, p := range all.Papers[:5] {
		selected[p.ID] = true
		ids = append(ids, p.ID)
	}
	_, err = st.SelectPapers(ctx, "pa", "Ann", ids)
	require.NoError(t, err)

	found := func(scope string) (map[string]bool, []research.Note) {
		t.Helper()
		run, err := a.Engine().StartAs(ctx, engine.Starter{Project: "pa", By: "Ann"}, pipeline.Name, map[string]any{
			pipeline.ParamQuestion: "sleep and memory consolidation", pipeline.ParamSources: []string{research.SourceLocal},
			pipeline.ParamStrategyCheckpoint: false, pipeline.ParamLibrary: scope})
		require.NoError(t, err)
		r := waitRun(t, a, run.ID, atGate)
		rs, err := pipeline.StateOf(r)
		require.NoError(t, err)
		require.NotNil(t, rs.Collection)
		got := map[string]bool{}
		for _, p := range rs.Collection.Papers {
			got[p.ID] = true
		}
		return got, rs.Notes
	}
	got, notes := found(research.LibraryProject)
	require.Equal(t, selected, got, "the selection's papers, and no other")
	require.Contains(t, fmt.Sprint(notes), "within the project's library selection")
	got, notes = found(research.LibraryAll)
	for _, p := range all.Papers[:24] {
		require.True(t, got[p.ID], "the whole library: %s", p.Title)
	}
	require.NotContains(t, fmt.Sprint(notes), "library selection")
}
