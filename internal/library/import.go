package library

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/store"
)

// ImportFiles imports every file in paths into st as one stream, so a bulk
// load of several corpora is staged and merged once, not once per file. Every file is opened first, so a typo in the last name fails before
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
	return Import(ctx, st, Chain(ctx, readers), opts)
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

// Import stores every record next yields in st, idempotently: a paper is
// keyed by its research.StableID, so importing the same file twice updates
// rows instead of duplicating them (fields missing from the newer record
// keep their old values).
//
// A stream that fits in one batch of opts.BatchSize (a typical export) is
// written in one transaction (st.WritePapers). A larger one is a bulk load: its records are
// staged one transaction per batch (so other writers, the workflow engine,
// are not held up while the file is read), the next batch parsed while
// one is staged, then moved into the library in short batches
// (st.MergeStaged). If the import is interrupted while the file is read
// (context cancelled, a broken gzip stream, the process killed), the
// library is as it was: the staged rows are deleted on the way out, or by
// a later store.Open if the process died; interrupted while merging, it
// keeps the batches merged so far (see ImportStats.Outcome). Stats count
// records read and skipped as the import goes; Inserted, Updated and
// Unchanged are known once the records are in the library.
func Import(ctx context.Context, st Store, next Next, opts ImportOptions) (stats ImportStats, err error) {
	// A full disk or a busy database is named as such, wherever it struck.
	defer func() { err = store.Fault(err) }()
	size := opts.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	report := func(indexing bool) {
		if opts.Progress != nil {
			opts.Progress(Progress{ImportStats: stats, Indexing: indexing})
		}
	}
	var ap apart
	batch, readErr := readBatch(next, size)
	if errors.Is(readErr, io.EOF) { // it all fits in one transaction
		b := stats.clone()
		papers := admit(&b, batch)
		if err := ap.keepApart(ctx, st, &b, papers); err != nil {
			return stats, err
		}
		counts, err := st.WritePapers(ctx, papers)
		if err != nil {
			return stats, err
		}
		if err := selectImported(ctx, st, opts, idsOf(nil, papers)); err != nil {
			return stats, err
		}
		stats = b
		stats.count(counts)
		report(false)
		return stats, nil
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) && len(batch) == 0 {
		return stats, readErr
	}
	stage := newID()      // a bulk load
	var selected []string // the staged papers' IDs, for opts.Project
	batches := readAhead(next, size, batch, readErr)
	defer batches.stop()
	for r := range batches.c {
		if len(r.batch) > 0 {
			b := stats.clone()
			// A batch read is staged even if ctx ends meanwhile, so the
			// stats of a stopped import are those of the records read
			// before it stopped, as when reading and staging took turns;
			// the reader, which watches ctx, stops the import.
			papers := admit(&b, r.batch)
			if err := ap.keepApart(context.WithoutCancel(ctx), st, &b, papers); err != nil {
				return stats, errors.Join(err, st.DropStaged(ctx, stage))
			}
			if err := st.StagePapers(context.WithoutCancel(ctx), stage, papers); err != nil {
				return stats, errors.Join(err, st.DropStaged(ctx, stage))
			}
			if opts.Project != "" {
				selected = idsOf(selected, papers)
			}
			stats = b
			report(false)
		}
		if r.err != nil && !errors.Is(r.err, io.EOF) {
			return stats, errors.Join(r.err, st.DropStaged(ctx, stage))
		}
	}
	report(true)
	counts, err := st.MergeStaged(ctx, stage)
	stats.count(counts) // on failure, the batches merged before it
	// The papers that reached the library join the selection, those of a
	// stopped merge too (the others are not in the library, so they are
	// skipped): importing the file again completes both.
	if serr := selectImported(context.WithoutCancel(ctx), st, opts, selected); serr != nil && err == nil {
		return stats, serr
	}
	if err != nil {
		return stats, errors.Join(err, st.DropStaged(ctx, stage))
	}
	return stats, nil
}

// idsOf appends the papers' IDs to ids.
func idsOf(ids []string, papers []store.ImportPaper) []string {
	for _, p := range papers {
		ids = append(ids, p.ID)
	}
	return ids
}

// selectImported adds the imported papers ids to opts.Project's library
// selection, if the import is a project's.
func selectImported(ctx context.Context, st Store, opts ImportOptions, ids []string) error {
	if opts.Project == "" || len(ids) == 0 {
		return nil
	}
	if _, err := st.SelectPapers(ctx, opts.Project, opts.By, ids); err != nil {
		return fmt.Errorf("add the imported papers to the project's library selection: %w", err)
	}
	return nil
}

// Outcome says what a stopped import left in the library: nothing (it
// stopped while reading, or before its first merge batch), or the papers
// its committed merge batches brought in, which importing the file again
// completes (imports are idempotent).
func (s ImportStats) Outcome() string {
	if n := s.Inserted + s.Updated + s.Unchanged; n > 0 {
		return fmt.Sprintf("%d of the records reached the library before it stopped; import the file again to finish", n)
	}
	return "nothing was imported, the library is as it was"
}

// UpsertPaper stores one paper as an import of one record: with its
// full-text entry in the same transaction, so a single change is
// searchable at once without a rebuild. It reports whether the paper was
// new; an invalid paper is fault.EInvalid.
func UpsertPaper(ctx context.Context, st Store, p research.RawPaper, origin string, extra json.RawMessage) (bool, error) {
	done := false
	stats, err := Import(ctx, st, func() (Record, error) {
		if done {
			return Record{}, io.EOF
		}
		done = true
		return Record{Line: 1, Paper: p, Origin: origin, Extra: extra}, nil
	}, ImportOptions{})
	if err != nil {
		return false, err
	}
	if len(stats.Errors) > 0 {
		return false, fault.Errorf(fault.EInvalid, "paper %q: %s", p.Title, stats.Errors[0].Reason)
	}
	return stats.Inserted == 1, nil
}

// readResult is one batch of records and the error (io.EOF at the end)
// that ended the stream after it, if any.
type readResult struct {
	batch []Record
	err   error
}

// batchReader is a goroutine reading the batches of an import ahead of
// its writer, so parsing the next batch overlaps storing this one (they
// take about the same time, on separate cores).
type batchReader struct {
	c    chan readResult
	quit chan struct{}
	done chan struct{}
}

// readAhead yields first (read already, with its error) and then the
// batches of next, one read ahead of the consumer (c is unbuffered, so
// at most two batches are in memory), closing c after the batch that ends
// the stream.
func readAhead(next Next, size int, first []Record, firstErr error) *batchReader {
	r := &batchReader{c: make(chan readResult), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer close(r.c)
		batch, err := first, firstErr
		for {
			select {
			case r.c <- readResult{batch, err}:
			case <-r.quit:
				return
			}
			if err != nil {
				return
			}
			batch, err = readBatch(next, size)
		}
	}()
	return r
}

// stop ends the reader (the import failed while writing) and waits for it,
// so next is not called after Import returns.
func (r *batchReader) stop() {
	close(r.quit)
	<-r.done
}

// readBatch collects up to size records; it returns the error (io.EOF at
// the end) that stopped it early along with what it read before.
func readBatch(next Next, size int) ([]Record, error) {
	batch := make([]Record, 0, min(size, 1024))
	for len(batch) < size {
		rec, err := next()
		if err != nil {
			return batch, err
		}
		batch = append(batch, rec)
	}
	return batch, nil
}

// admit counts the records of batch in stats and returns the papers to
// store; the others are skipped (unreadable, deliberately left out, or
// invalid), with their reasons counted.
func admit(stats *ImportStats, batch []Record) []store.ImportPaper {
	papers := make([]store.ImportPaper, 0, len(batch))
	for _, rec := range batch {
		stats.Read++
		switch {
		case rec.Problem != "":
			stats.Skip(rec.Origin, rec.Line, rec.Problem, true)
			continue
		case rec.Skip != "":
			stats.Skip(rec.Origin, rec.Line, rec.Skip, false)
			continue
		}
		p := rec.Paper
		if p.ID == "" {
			p.ID = research.StableID(p)
		}
		if err := p.Validate(); err != nil {
			stats.Skip(rec.Origin, rec.Line, "invalid record: "+fault.ErrorMessage(err)+fieldSummary(err), true)
			continue
		}
		for _, w := range rec.Warnings {
			stats.Warn(rec.Origin, rec.Line, w)
		}
		papers = append(papers, store.ImportPaper{RawPaper: p, Origin: rec.Origin, Extra: rec.Extra, Line: rec.Line})
	}
	return papers
}

// fieldSummary lists an invalid paper's field errors, so the import report
// says which field to fix.
func fieldSummary(err error) string {
	f := fault.ErrorFields(err)
	if len(f) == 0 {
		return ""
	}
	parts := make([]string, 0, len(f))
	for k, v := range f {
		parts = append(parts, k+": "+v)
	}
	sort.Strings(parts)
	return " (" + strings.Join(parts, "; ") + ")"
}
