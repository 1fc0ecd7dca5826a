package library

import (
	"context"
	"errors"
	"io"

	"quarry/internal/biblio/codecs"
)

// ImportFiles imports every file in paths into st as one stream, so a bulk
// load of several corpora builds the full-text index once, not once per
// file. Every file is opened first, so a typo in the last name fails before
// anything is written.
func ImportFiles(ctx context.Context, st Store, paths []string, read codecs.Options, opts ImportOptions) (ImportStats, error) {
	readers := make([]*Reader, 0, len(paths))
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	for _, p := range paths {
		r, err := Open(p, read)
		if err != nil {
			return ImportStats{}, err
		}
		readers = append(readers, r)
	}
	return st.ImportPapers(ctx, Chain(ctx, readers), opts)
}

// Chain returns the records of readers one file after the other, as the
// one stream an import takes; it stops with ctx's error once ctx is done.
func Chain(ctx context.Context, readers []*Reader) Next {
	i := 0
	return func() (Record, error) {
		if err := ctx.Err(); err != nil {
			return Record{}, err
		}
		for i < len(readers) {
			rec, err := readers[i].Next()
			if errors.Is(err, io.EOF) {
				i++
				continue
			}
			return rec, err
		}
		return Record{}, io.EOF
	}
}
