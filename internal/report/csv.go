package report

import (
	"io"
	"strings"

	"quarry/internal/biblio/csvfile"
	"quarry/internal/skills/pipeline"
)

// CSVHeader is the search-strategy CSV's header row, exported so readers
// of the file (and its tests) name columns instead of counting them.
func CSVHeader() []string {
	return []string{"iteration", "source", "source_kind", "query_as_sent", "searched_at", "year_from", "year_to",
		"max_results", "results", "error", "warnings",
		"dedup_input", "dedup_output", "merged", "marked_relevant", "marked_irrelevant"}
}

// Values of the CSV's source_kind column.
const (
	// kindSearch is a database or other searchable source; its rows are
	// its queries, or one row saying it was not queried and why.
	kindSearch = "search"
	// kindFile is a file attached to the run: its records joined the
	// results, but it was not queried.
	kindFile = "file"
)

// SearchStrategyCSV writes one row per search actually made: per searched
// iteration, source and query, with what the request carried (the query as
// sent, the year range, the limit). Results and error are the source's for
// the whole iteration (all its queries), repeated on each of its rows, and
// so are its warnings (what it said about results it returned, such as
// terms PubMed left out; not errors); dedup and mark counts are the
// iteration's. A query the source could not
// express has "not sent: ..." as its error and nothing it would have
// carried (query, time, years, limit). A source that was sent nothing
// (not configured) has one row with "not queried: ..." as its error and
// no query, time, years or limit. A
// file attached to the run has one row of source_kind "file" with its
// record count and no query, time, years or limit, since it was not
// queried. The strategy's filters have no columns: a source receives
// them only as its query_as_sent shows them, and the Markdown report
// lists them per iteration. Strategies rejected before
// searching made no search and have no rows (the Markdown report lists
// them).
func SearchStrategyCSV(w io.Writer, rs pipeline.RunState) error {
	cw := csvfile.NewSheetWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return err
	}
	for _, h := range history(rs) {
		if !h.Searched() {
			continue
		}
		s := h.Strategy
		rel, irr := marks(h)
		iterCounts := []string{itoa(h.Dedup.Input), itoa(h.Dedup.Output), itoa(h.Dedup.Merged), itoa(rel), itoa(irr)}
		for _, src := range sourcesOf(h) {
			results := ""
			if src.Known {
				results = itoa(src.Result.Count)
			}
			tail := append([]string{strings.Join(src.Result.Warnings, "; ")}, iterCounts...)
			if src.File != nil {
				row := append([]string{itoa(h.Iteration), src.Name, kindFile, "", "", "", "", "", results, src.Result.Error}, tail...)
				if err := cw.Write(row); err != nil {
					return err
				}
				continue
			}
			if src.NotQueried != "" {
				row := append([]string{itoa(h.Iteration), src.Name, kindSearch, "", "", "", "", "", results, notQueriedText(src)}, tail...)
				if err := cw.Write(row); err != nil {
					return err
				}
				continue
			}
			for _, q := range src.Queries {
				row := []string{itoa(h.Iteration), src.Name, kindSearch, q.Query, timeText(h.SearchedAt),
					optInt(s.YearRange.From), optInt(s.YearRange.To), optInt(s.MaxResultsPerSource), results, src.Result.Error}
				row = append(row, tail...)
				if q.Skipped { // no request, so nothing it carried
					row = append([]string{itoa(h.Iteration), src.Name, kindSearch, "", "", "", "", "", results, notSent, ""}, iterCounts...)
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// notSent explains a query a source was not sent.
const notSent = "not sent: nothing in the query this source can search"

// optInt is n as text, "" for zero (an open year bound, no limit).
func optInt(n int) string {
	if n == 0 {
		return ""
	}
	return itoa(n)
}
