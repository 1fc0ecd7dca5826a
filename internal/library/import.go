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
	i := 0
	next := func() (Record, error) {
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
	return st.ImportPapers(ctx, next, opts)
}
