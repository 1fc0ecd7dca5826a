package textindex

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewRejects(t *testing.T) {
	t.Parallel()
	_, err := New(0, asciiTokenize)
	require.Error(t, err)
	_, err = New(2, nil)
	require.Error(t, err)
	ix, err := New(2, asciiTokenize)
	require.NoError(t, err)
	require.Error(t, ix.Add(1, []string{"a", "b", "c"}))
}

// TestReadersSeeWholeBatches queries while AddAll loads rows that all hold
// both "common" and "other": a reader that saw part of a batch (one
// term's postings merged, not the other's) would find a row with one and
// not the other.
func TestReadersSeeWholeBatches(t *testing.T) {
	t.Parallel()
	ix, err := New(2, asciiTokenize, WithWorkers(2))
	require.NoError(t, err)
	oneNotOther, err := Parse(`common NOT other`)
	require.NoError(t, err)
	otherNotOne, err := Parse(`other NOT common`)
	require.NoError(t, err)
	common, err := Parse(`common`)
	require.NoError(t, err)
	var stop, loaded atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for !stop.Load() {
				require.Zero(t, ix.Count(oneNotOther, nil))
				require.Zero(t, ix.Count(otherNotOne, nil))
				hits, total, err := ix.Search(common, []float64{2, 1}, 0, 10, nil)
				require.NoError(t, err)
				if !loaded.Load() {
					require.GreaterOrEqual(t, total, last, "rows never disappear while loading")
				}
				require.Equal(t, min(total, 10), len(hits))
				last = total
				reads.Add(1)
			}
		}()
	}
	const rows = 3 * buildBatch
	i := 0
	require.NoError(t, ix.AddAll(func() (Doc, error) {
		if i == rows {
			return Doc{}, io.EOF
		}
		i++
		return Doc{ID: int64(i), Cols: []string{fmt.Sprintf("common w%d", i%97), fmt.Sprintf("w%d other w%d", i%13, i%7)}}, nil
	}))
	loaded.Store(true)
	// Replacing and deleting with readers running too.
	for id := int64(1); id <= 200; id++ {
		if id%2 == 0 {
			require.True(t, ix.Delete(id))
		} else {
			require.NoError(t, ix.Add(id, []string{"common other", "again"}))
		}
	}
	stop.Store(true)
	wg.Wait()
	require.Equal(t, rows-100, ix.Len())
	require.Equal(t, rows-100, ix.Count(common, nil))
	t.Logf("%d reads during the load", reads.Load())
}
