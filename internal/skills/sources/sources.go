// Package sources is the port every place papers come from plugs into: the
// Source interface, the request it answers, the warning it may attach, and
// the turn-waiting hooks that keep a rate-limited API's queue out of a call's
// timeout. One package per source sits below it; the searcher fans out over
// them.
package sources

import (
	"context"
	"quarry/internal/fault"
	"quarry/internal/research"
	"strings"
)

// SourceRequest is one call to one source: a single query already rendered
// in that source's syntax, plus the limits every source understands.
type SourceRequest struct {
	// Query is the text exactly as the source receives it: the query's
	// PerSource entry for the source, or its Text when there is none.
	Query     string
	YearRange research.YearRange
	// MaxResults caps how many records the source returns for this query.
	MaxResults int
	// Offset skips that many of the source's ranked records: the next
	// page of a query whose first Offset records were fetched ("Show
	// more" at the review). Each source sends it in its API's own paging
	// (OpenAlex page, PubMed retstart, arXiv start, Crossref offset,
	// Semantic Scholar offset, SerpAPI start, the library's OFFSET).
	Offset  int
	Filters research.Filters
	// QuestionWords are the strategy's (research.SearchStrategy): a
	// source that ranks by words may use them, others ignore them.
	QuestionWords []string
}

// Check rejects a request no source can answer; sources call it first so
// every source words these errors the same way.
func (r SourceRequest) Check(source string) error {
	if strings.TrimSpace(r.Query) == "" {
		return fault.Errorf(fault.EInvalid, "%s: empty query", source)
	}
	if r.MaxResults < 1 {
		return fault.Errorf(fault.EInvalid, "%s: max results must be positive", source)
	}
	if r.Offset < 0 {
		return fault.Errorf(fault.EInvalid, "%s: offset must not be negative", source)
	}
	return nil
}

// PageOf maps an offset onto an API that pages by number (1-based) with
// a fixed page size: the page that holds record offset, and how many of
// its first records come before offset and are to be dropped. An offset
// that is a multiple of size (every "Show more" after full pages) skips
// none.
func PageOf(offset, size int) (page, skip int) {
	if size < 1 {
		return 1, 0
	}
	return offset/size + 1, offset % size
}

// Source is one place papers come from (an online API or the local
// library). The searcher treats them all alike, so adding a database means
// writing one Source, not touching the pipeline.
type Source interface {
	// Name is the source's strategy name, e.g. SourceOpenAlex.
	Name() string
	// Search returns at most req.MaxResults records in the source's own
	// ranking order. It must honour ctx; an empty result is not an error.
	// A source may return papers together with an error, to say they are
	// partial; the searcher keeps both. Papers that are good but were found
	// by a query the source altered (PubMed leaving out terms it cannot
	// use) come with a *Warning instead, which is not a failure.
	//
	// A source whose client waits in a queue of its own (an API's rate
	// limit) marks that wait with WaitingForTurn, so the searcher's
	// per-call timeout measures the remote call and not the queue.
	Search(ctx context.Context, req SourceRequest) ([]research.RawPaper, error)
}

// TotalUnknown is Page.Total when the source cannot tell how many records
// match a query in all.
const TotalUnknown = -1

// Page is what one call to a source returned: the records (at most
// SourceRequest.MaxResults) and how many the source says match the query
// in all, so a capped result is never read as everything there is.
type Page struct {
	Papers []research.RawPaper
	// Total is the source's own count of matching records over every page
	// (OpenAlex meta.count, Crossref total-results, PubMed's esearch
	// count, arXiv's opensearch:totalResults, Semantic Scholar's total,
	// the local library's count of its FTS match), TotalUnknown when it
	// does not say.
	Total int
}

// Counter is a Source that also says how many records match a query in
// all. It is a separate port rather than a change to Search so a Source
// that cannot tell (and every test fake) stays a Source as it is; every
// source Quarry ships implements it, and TestConformance checks the total
// is read from each API's answer.
type Counter interface {
	Source
	// SearchCounted is Search that also returns the source's total.
	SearchCounted(ctx context.Context, req SourceRequest) (Page, error)
}

// AtLeast is a source's total as a Page reports it: TotalUnknown stays
// unknown, and a count below the n records returned (an estimate, or an
// index that moved between pages) is raised to n.
func AtLeast(total, n int) int {
	if total < 0 {
		return TotalUnknown
	}
	return max(total, n)
}

// SearchPage calls src, through SearchCounted when it is a Counter, else
// through Search with the total unknown.
func SearchPage(ctx context.Context, src Source, req SourceRequest) (Page, error) {
	if c, ok := src.(Counter); ok {
		return c.SearchCounted(ctx, req)
	}
	papers, err := src.Search(ctx, req)
	return Page{Papers: papers, Total: TotalUnknown}, err
}

// Warning is the error a Source returns together with papers that are
// good, to tell the researcher something about how they were found:
// PubMed leaving out a term it does not know, searching a phrase as
// separate words. The searcher records it in SourceResult.Warnings, not
// Error, so the page and the report do not show the source as failed.
type Warning struct {
	// Message says what happened, in the researcher's terms.
	Message string
	// Err is the detail (e.g. the terms left out), reachable with errors.As.
	Err error
}

// Error implements error: the message, then the detail.
func (w *Warning) Error() string {
	switch {
	case w.Err == nil:
		return w.Message
	case w.Message == "":
		return w.Err.Error()
	}
	return w.Message + ": " + w.Err.Error()
}

// Unwrap returns the detail.
func (w *Warning) Unwrap() error { return w.Err }

// QueryFolder is a Source whose API receives other text than the rendered
// query: arXiv folds the year range into it (a submittedDate clause),
// Semantic Scholar takes plain words. The searcher records SentQuery
// instead of the rendered query, so the search report shows the query
// exactly as the source received it.
type QueryFolder interface {
	SentQuery(req SourceRequest) string
}
