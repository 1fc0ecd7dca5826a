// Package local is the "local" search source: the paper library imported
// into Quarry's own database (see `quarry import`), searched with SQLite
// FTS5. It depends only on the small Library interface, so the skills side
// never imports the store or SQL.
package local

import (
	"context"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
)

// Library is what the source needs from the store: a full-text search that
// takes an FTS5 MATCH expression (the query package's local rendering),
// returns papers best match first, and reports a malformed expression as
// fault.EInvalid.
type Library interface {
	SearchLibrary(ctx context.Context, match string, years research.YearRange, limit int) ([]research.RawPaper, error)
}

// Source searches the local library.
type Source struct {
	lib Library
}

var _ sources.Source = (*Source)(nil)

// New returns the local source over lib. A nil lib is EInvalid rather than
// a panic at the first search, so a wiring mistake shows at start-up.
func New(lib Library) (*Source, error) {
	if lib == nil {
		return nil, fault.Errorf(fault.EInvalid, "local source: no library")
	}
	return &Source{lib: lib}, nil
}

// Name implements sources.Source.
func (s *Source) Name() string { return research.SourceLocal }

// Search implements sources.Source: req.Query is the FTS5 expression, the
// year range is applied by the library (papers of unknown year are kept, as
// YearRange.Contains does), and Rank follows the library's bm25 order.
func (s *Source) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	if err := req.Check(s.Name()); err != nil {
		return nil, err
	}
	papers, err := s.lib.SearchLibrary(ctx, req.Query, req.YearRange, min(req.MaxResults, research.MaxResultsLimit))
	if err != nil {
		return nil, err
	}
	out := make([]research.RawPaper, 0, len(papers))
	for _, p := range papers {
		p.Source = s.Name()
		p.Rank = len(out) + 1
		out = append(out, p)
	}
	return out, nil
}
