// Package library is the import side of Quarry's local paper library: it
// streams files in any bibliographic format biblio/codecs reads (BibTeX,
// RIS, CSL-JSON, MEDLINE, CSV, JSON Lines corpora; plain or gzipped),
// decides which records to keep, and splits the stream into the store's
// transactions (Import). It writes no SQL: internal/store implements Store
// with one transaction per method.
package library

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"quarry/internal/research"
	"quarry/internal/store"
)

// Record is one record of an import stream, already mapped. Exactly one of
// three things is true: Paper is ready to store, Skip names why the record
// is deliberately left out (e.g. a rejected submission), or Problem says why
// the line could not be read at all. The stream never stops for one bad
// line, so a large corpus with a few broken records still imports.
type Record struct {
	// Line is the 1-based line number in the input file, for error reports.
	Line  int
	Paper research.RawPaper
	// Extra holds the corpus-specific fields (categories, track, keywords,
	// ...) as a JSON object, kept so nothing of the source is lost.
	Extra json.RawMessage
	// Origin says where the record came from (the file name), for the
	// papers.source column.
	Origin string
	// Warnings are what the reader could not keep of a record that still
	// imports (a year field that holds no year); each is reported with
	// the line.
	Warnings []string
	Skip     string
	Problem  string
}

// MaxRecordErrors caps ImportStats.Errors so a file of garbage cannot grow
// the report without bound; SkipReasons still counts every record.
const MaxRecordErrors = 1000

// ImportStats is what an import did. Read = Inserted + Updated +
// Unchanged + Skipped. Unchanged counts records already in the library with
// the same content, so importing a file again reads as "nothing changed",
// not as a mass update.
type ImportStats struct {
	Read      int `json:"read"`
	Inserted  int `json:"inserted"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Skipped   int `json:"skipped"`
	// SkipReasons counts skipped records per reason ("malformed JSON",
	// "status Reject", ...).
	SkipReasons map[string]int `json:"skip_reasons,omitempty"`
	// Errors lists the first MaxRecordErrors unreadable or invalid lines.
	Errors []research.RecordError `json:"errors,omitempty"`
	// Warned counts records imported with a warning (something of theirs
	// was not kept, or they were kept apart from a different work with
	// the same DOI); Warnings lists the first MaxRecordErrors of them.
	Warned   int                    `json:"warned,omitempty"`
	Warnings []research.RecordError `json:"warnings,omitempty"`
}

// Warn records a warning on a record that was imported.
func (s *ImportStats) Warn(origin string, line int, reason string) {
	s.Warned++
	if len(s.Warnings) < MaxRecordErrors {
		s.Warnings = append(s.Warnings, research.RecordError{Origin: origin, Line: line, Reason: reason})
	}
}

// Skip counts one skipped record, and records it as an error line when
// isError is set (a broken line, as opposed to one filtered on purpose).
func (s *ImportStats) Skip(origin string, line int, reason string, isError bool) {
	s.Skipped++
	if s.SkipReasons == nil {
		s.SkipReasons = map[string]int{}
	}
	s.SkipReasons[reason]++
	if isError && len(s.Errors) < MaxRecordErrors {
		s.Errors = append(s.Errors, research.RecordError{Origin: origin, Line: line, Reason: reason})
	}
}

// Add accumulates o into s, for totals over several files.
func (s *ImportStats) Add(o ImportStats) {
	s.Read += o.Read
	s.Inserted += o.Inserted
	s.Updated += o.Updated
	s.Unchanged += o.Unchanged
	s.Skipped += o.Skipped
	for k, v := range o.SkipReasons {
		if s.SkipReasons == nil {
			s.SkipReasons = map[string]int{}
		}
		s.SkipReasons[k] += v
	}
	for _, e := range o.Errors {
		if len(s.Errors) < MaxRecordErrors {
			s.Errors = append(s.Errors, e)
		}
	}
	s.Warned += o.Warned
	for _, e := range o.Warnings {
		if len(s.Warnings) < MaxRecordErrors {
			s.Warnings = append(s.Warnings, e)
		}
	}
}

// count adds what a write did to the library.
func (s *ImportStats) count(c store.ImportCounts) {
	s.Inserted += c.Inserted
	s.Updated += c.Updated
	s.Unchanged += c.Unchanged
}

// clone is a deep copy, so a batch can count into it and the import's
// stats change only once the batch is written, and a progress report
// never shares the maps and slices the import goes on changing.
func (s ImportStats) clone() ImportStats {
	s.SkipReasons = maps.Clone(s.SkipReasons)
	s.Errors = slices.Clone(s.Errors)
	s.Warnings = slices.Clone(s.Warnings)
	return s
}

// ReasonSummary renders SkipReasons as "2 malformed JSON, 1 status Reject",
// most frequent first, for the one-line import report.
func (s ImportStats) ReasonSummary() string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range s.SkipReasons {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = strconv.Itoa(e.v) + " " + e.k
	}
	return strings.Join(parts, ", ")
}

// Progress is reported while an import runs: the counts so far, and
// Indexing once every row is staged and the rows are being moved into the
// library (the one long step without intermediate reports).
type Progress struct {
	ImportStats
	Indexing bool
}

// ImportOptions tune Import; the zero value uses the defaults.
type ImportOptions struct {
	// BatchSize is the number of records per write transaction (default
	// DefaultBatchSize): big enough to amortise commits, small enough that
	// other writers (the workflow engine) are not held up for long.
	BatchSize int
	// Progress, if set, is called after every batch read and before
	// the index build.
	Progress func(Progress)
	// Project, if set, is the project whose library selection the
	// imported papers join, added by By (a display name): the papers
	// go into the installation's library, deduplicated as always, and
	// the project picks them.
	Project, By string
}

// DefaultBatchSize is ImportOptions.BatchSize's default.
const DefaultBatchSize = 5000

// Next yields the next record of an import stream; it returns io.EOF at the
// end. Any other error (an unreadable file, a cancelled context) ends the
// import; a bad line is a Record with Problem set, not an error.
type Next func() (Record, error)

// Store is what an import needs of the database: internal/store
// implements it. Each method is one transaction; Import decides which to
// use for a stream and in what batches.
type Store interface {
	// WritePapers stores papers at once.
	WritePapers(ctx context.Context, papers []store.ImportPaper) (store.ImportCounts, error)
	// SelectPapers adds library papers to a project's library selection.
	SelectPapers(ctx context.Context, project, by string, ids []string) (int, error)
	// StagePapers, MergeStaged and DropStaged are a bulk import: batches
	// set aside, then moved into the library, or dropped.
	StagePapers(ctx context.Context, stage string, papers []store.ImportPaper) error
	MergeStaged(ctx context.Context, stage string) (store.ImportCounts, error)
	DropStaged(ctx context.Context, stage string) error
	// LibraryWorks gives the title and type stored under each of ids,
	// so a different work sharing a DOI is kept apart (apart).
	LibraryWorks(ctx context.Context, ids []string) (map[string]store.StoredWork, error)
}

var _ Store = (*store.Store)(nil)
