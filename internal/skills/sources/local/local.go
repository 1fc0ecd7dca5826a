// Package local is the "local" search source: the paper library imported
// into Quarry's own database (see `quarry import`), searched with the
// store's in-memory full-text index, which reads FTS5's MATCH syntax and
// ranks by FTS5's bm25. It depends only on the small Library interface, so the skills side
// never imports the store or SQL.
package local

import (
	"context"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
)

// Library is what the source needs from the store: a full-text search that
// takes an FTS5 MATCH expression (the query package's local rendering),
// returns papers best match first from an offset (the next page), and
// reports a malformed expression as fault.EInvalid; and the count of the
// same match without its limit. Ranked retrieval needs the scored matches
// of an expression (docids only), the papers of docids, and how many
// papers hold each of some words.
type Library interface {
	SearchLibraryPage(ctx context.Context, match string, years research.YearRange, offset, limit int) ([]research.RawPaper, error)
	CountLibrary(ctx context.Context, match string, years research.YearRange) (int, error)
	LibraryHits(ctx context.Context, match string, years research.YearRange, titleWeight float64, limit int) ([]research.LibraryHit, error)
	LibraryPapersByDoc(ctx context.Context, docs []int64) ([]research.RawPaper, error)
	LibraryDocFreqs(ctx context.Context, words []string) (int, []int, error)
}

// Semantic finds the library's papers nearest in meaning to a text, best
// first (library.Semantic, over stored embeddings). It is optional: a
// source without one ranks by words alone, exactly as it always has.
type Semantic interface {
	Nearest(ctx context.Context, text string, years research.YearRange, n int) ([]int64, error)
}

// Source searches the local library.
type Source struct {
	lib      Library
	tuning   Tuning
	semantic Semantic
}

// Option adds an optional dependency to a Source.
type Option func(*Source)

// WithSemantic makes the ranking hybrid: the papers nearest to the query
// in meaning are fused with the word ranking (see hybrid). A nil sem is
// no option.
func WithSemantic(sem Semantic) Option {
	return func(s *Source) { s.semantic = sem }
}

var _ sources.Counter = (*Source)(nil)

// New returns the local source over lib. A nil lib is EInvalid rather than
// a panic at the first search, so a wiring mistake shows at start-up.
func New(lib Library, opts ...Option) (*Source, error) {
	if lib == nil {
		return nil, fault.Errorf(fault.EInvalid, "local source: no library")
	}
	s := &Source{lib: lib, tuning: DefaultTuning()}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// NewTuned is New with other ranking constants: the search benchmark's
// leave-one-review-out selection tries several.
func NewTuned(lib Library, t Tuning, opts ...Option) (*Source, error) {
	s, err := New(lib, opts...)
	if err != nil {
		return nil, err
	}
	s.tuning = t
	return s, nil
}

// Name implements sources.Source.
func (s *Source) Name() string { return research.SourceLocal }

// Search implements sources.Source: SearchCounted without the total.
func (s *Source) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter. req.Query is the local
// rendering of a query (FTS5 syntax that is also the query syntax): it is
// ranked (see rank), not matched strictly, so a paper that says "deep
// convolutional networks" is found for "deep learning" and "image
// recognition" when it matches most of the query, and the total is every
// paper that matches some included term (and no excluded one). A query only FTS5 can read (a
// researcher's column filter, NEAR) is matched strictly as written. The
// year range is applied by the library (papers of unknown year are kept,
// as YearRange.Contains does), and Rank follows the order from req.Offset
// (a next page).
func (s *Source) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	unknown := sources.Page{Total: sources.TotalUnknown}
	if err := req.Check(s.Name()); err != nil {
		return unknown, err
	}
	limit := min(req.MaxResults, research.MaxResultsLimit)
	if q, err := query.Parse(req.Query); err == nil && q.Positive() {
		ranked, err := s.rank(ctx, q, req, req.Offset+limit)
		if err != nil {
			return unknown, err
		}
		page := ranked[min(req.Offset, len(ranked)):min(req.Offset+limit, len(ranked))]
		papers, err := s.lib.LibraryPapersByDoc(ctx, page)
		if err != nil {
			return unknown, err
		}
		// A full page asks how many papers match some included term; a
		// shorter one is the ranking's end.
		total := req.Offset + len(papers)
		if len(papers) >= limit {
			if total, err = s.lib.CountLibrary(ctx, anyTermExpr(q), req.YearRange); err != nil {
				return unknown, err
			}
		}
		return sources.Page{Papers: s.ranked(papers), Total: sources.AtLeast(total, req.Offset+len(papers))}, nil
	}
	return s.strict(ctx, req, limit)
}

// strict matches req.Query as an FTS5 expression: the total is the
// library's count of the same match, asked only when the page is full (a
// shorter page is the last).
func (s *Source) strict(ctx context.Context, req sources.SourceRequest, limit int) (sources.Page, error) {
	unknown := sources.Page{Total: sources.TotalUnknown}
	papers, err := s.lib.SearchLibraryPage(ctx, req.Query, req.YearRange, req.Offset, limit)
	if err != nil {
		return unknown, err
	}
	total := req.Offset + len(papers)
	if len(papers) >= limit {
		if total, err = s.lib.CountLibrary(ctx, req.Query, req.YearRange); err != nil {
			return unknown, err
		}
	}
	out := s.ranked(papers)
	return sources.Page{Papers: out, Total: sources.AtLeast(total, len(out))}, nil
}

// ranked names the source and numbers the papers of a page from 1.
func (s *Source) ranked(papers []research.RawPaper) []research.RawPaper {
	out := make([]research.RawPaper, 0, len(papers))
	for _, p := range papers {
		p.Source = s.Name()
		p.Rank = len(out) + 1
		out = append(out, p)
	}
	return out
}
