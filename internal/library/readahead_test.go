package library_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// failingStage is a store whose second StagePapers fails.
type failingStage struct {
	staged, dropped int
}

func (f *failingStage) WritePapers(context.Context, []store.ImportPaper) (store.ImportCounts, error) {
	return store.ImportCounts{}, errors.New("not a bulk import")
}
func (f *failingStage) SelectPapers(context.Context, string, string, []string) (int, error) {
	return 0, errors.New("not a project's import")
}
func (f *failingStage) StagePapers(_ context.Context, _ string, papers []store.ImportPaper) error {
	if f.staged++; f.staged == 2 {
		return errors.New("disk on fire")
	}
	return nil
}
func (f *failingStage) MergeStaged(context.Context, string) (store.ImportCounts, error) {
	return store.ImportCounts{}, errors.New("nothing should be merged")
}
func (f *failingStage) DropStaged(context.Context, string) error { f.dropped++; return nil }
func (f *failingStage) LibraryWorks(context.Context, []string) (map[string]store.StoredWork, error) {
	return nil, nil
}

// TestImportStopsReadingWhenStagingFails: the next batch is read while one
// is staged; when staging fails, Import returns only once the reader has
// stopped (the caller closes the files next), the stats are those of the
// batches staged, and the stream is not read to its end.
func TestImportStopsReadingWhenStagingFails(t *testing.T) {
	t.Parallel()
	const total, batch = 1000, 10
	calls := 0
	next := func() (library.Record, error) {
		if calls == total {
			return library.Record{}, io.EOF
		}
		calls++
		p := research.RawPaper{Title: fmt.Sprintf("Quokka census %d", calls), Year: 2020}
		return library.Record{Line: calls, Paper: p, Origin: "q.jsonl"}, nil
	}
	st := &failingStage{}
	stats, err := library.Import(context.Background(), st, next, library.ImportOptions{BatchSize: batch})
	require.ErrorContains(t, err, "disk on fire")
	read := calls
	require.Equal(t, batch, stats.Read, "only the staged batch is counted")
	require.Equal(t, 1, st.dropped)
	require.LessOrEqual(t, read, 4*batch, "reading stopped with the import")
	require.Equal(t, read, calls, "nothing reads after Import returns")
}
