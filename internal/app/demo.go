package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"quarry/internal/library"
	"quarry/internal/library/demo"
	"quarry/internal/store"
)

// seedDemoLibrary loads the embedded demo papers into an empty library, so a
// fresh `make run` can search offline. A library that has any paper (the
// demo from an earlier start, or the researcher's own imports) is left alone.
func seedDemoLibrary(ctx context.Context, st *store.Store, log *slog.Logger) error {
	n, err := st.LibraryCount(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	papers, err := demo.Papers()
	if err != nil {
		return err
	}
	i := 0
	next := func() (library.Record, error) {
		if i >= len(papers) {
			return library.Record{}, io.EOF
		}
		i++
		return library.Record{Line: i, Paper: papers[i-1], Origin: "demo"}, nil
	}
	stats, err := library.Import(ctx, st, next, library.ImportOptions{})
	if err != nil {
		return fmt.Errorf("app: seed demo library: %w", err)
	}
	log.Info("seeded the empty library with the demo papers", "papers", stats.Inserted)
	return nil
}
