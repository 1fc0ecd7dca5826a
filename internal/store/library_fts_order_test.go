package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/store"
)

// TestBulkMergeIndexesInDocidOrder: FTS5 writes its in-memory index out as
// a new segment whenever it is given a rowid below the last one, so a
// merge batch must index its rows in docid order. Read by ID (the random
// order of stable IDs) it wrote a segment per row or two and spent most of
// a large import merging them. FTS5's structure record counts the
// segments written (its write counter): a few per merge batch, not one per
// row.
func TestBulkMergeIndexesInDocidOrder(t *testing.T) {
	t.Parallel()
	st, path := openLibraryFile(t)
	const n = 2000
	recs := make([]library.Record, n)
	for i := range recs {
		recs[i] = paper(fmt.Sprintf("Quokka field study number %d", i), "Quokkas of Rottnest Island, observed again.", 2020, "")
	}
	stats, err := library.Import(context.Background(), st, stream(recs...), library.ImportOptions{BatchSize: 500})
	require.NoError(t, err)
	require.Equal(t, n, stats.Inserted)
	require.Len(t, search(t, st, `"rottnest"`), 50, "the rows are searchable")

	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	var block []byte
	require.NoError(t, raw.QueryRow(`SELECT block FROM papers_fts_data WHERE id = 10`).Scan(&block))
	written := ftsWriteCounter(t, block)
	require.Less(t, written, int64(n/20), "segments written for %d rows", n)
}

// ftsWriteCounter reads the count of segments written from an FTS5
// structure record: a 4-byte cookie, an optional 4-byte version-2 marker,
// then varints for the number of levels, of segments, and the counter.
func ftsWriteCounter(t *testing.T, b []byte) int64 {
	t.Helper()
	require.Greater(t, len(b), 8)
	b = b[4:]
	if b[0] == 0xff && b[1] == 0 && b[2] == 0 && b[3] == 1 {
		b = b[4:]
	}
	varint := func() int64 { // SQLite's: big-endian 7-bit groups
		var v int64
		for i := range 9 {
			c := b[0]
			b = b[1:]
			if i == 8 {
				return v<<8 | int64(c)
			}
			v = v<<7 | int64(c&0x7f)
			if c&0x80 == 0 {
				return v
			}
		}
		return v
	}
	varint() // levels
	varint() // segments
	return varint()
}
