package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunStampReadsIndexesOnly: the stamp, read on every run page and
// GET /api/runs/:id, comes from covering indexes, never from the runs
// row, where the version sits behind the state and reading it walks the
// state's overflow pages (what made a 2,000-paper run's page slow).
func TestRunStampReadsIndexesOnly(t *testing.T) {
	SkipOnPostgres(t, "SQLite's EXPLAIN QUERY PLAN")
	t.Parallel()
	ctx := context.Background()
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{})
	require.NoError(t, err)
	defer s.Close()
	rows, err := s.read.QueryContext(ctx, `EXPLAIN QUERY PLAN `+runStampSQL(s.read.d), "r1")
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	joined := strings.Join(plan, "\n")
	require.Contains(t, joined, "SEARCH runs USING COVERING INDEX runs_id_version", joined)
	require.Contains(t, joined, "SEARCH paper_marks USING COVERING INDEX paper_marks_run_seq", joined)
}
