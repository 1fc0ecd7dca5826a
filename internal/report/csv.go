package report

import (
	"io"
	"slices"
	"strings"

	"quarry/internal/biblio/csvfile"
	"quarry/internal/skills/pipeline"
)

// CSVHeader is the search-strategy CSV's header row, exported so readers
// of the file (and its tests) name columns instead of counting them.
func CSVHeader() []string {
	return []string{"iteration", "source", "source_kind", "query_as_sent", "searched_at", "year_from", "year_to",
		"max_results", "results", "total_found", "error", "warnings", "source_records",
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
// sent, the year range, the limit) and what it returned: results is the
// records that query returned, before the source's queries were merged,
// total_found how many the source said match it (empty when it did not
// say; above results when the limit cut the result),
// and error and warnings are that query's own (warnings say something
// about results it returned, such as terms PubMed left out; they are not
// errors). source_records is the records the source contributed in the
// iteration, its queries' results merged (a record two of its queries
// returned counted once), repeated on each of the source's rows as the
// dedup and mark counts (the iteration's) are on each of the iteration's:
// a source's results can add up to more than its source_records. For a
// search recorded before each query's count was kept, results is empty
// and source_records is the only count. A query the source could not
// express has "not sent: ..." as its error and nothing it would have
// carried (query, time, years, limit) or returned. A source that was sent
// nothing (not configured) has one row with "not queried: ..." as its
// error and no query, time, years or limit. A file attached to the run
// has one row of source_kind "file" with its record count as results and
// source_records and no query, time, years or limit, since it was not
// queried. The strategy's filters have no columns: a source receives
// them only as its query_as_sent shows them, and the Markdown report
// lists them per iteration. Strategies rejected before searching made no
// search and have no rows (the Markdown report lists them).
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
			records := ""
			if src.Known {
				records = itoa(src.Result.Count)
			}
			if src.File != nil || src.NotQueried != "" { // one row for the source: its results are the source's
				kind, errText := kindFile, src.Result.Error
				if src.File == nil {
					kind, errText = kindSearch, notQueriedText(src)
				}
				row := slices.Concat([]string{itoa(h.Iteration), src.Name, kind, "", "", "", "", "", records, "", errText,
					strings.Join(src.Result.Warnings, "; "), records}, iterCounts)
				if err := cw.Write(row); err != nil {
					return err
				}
				continue
			}
			for _, q := range src.Queries {
				results := ""
				if q.Counted {
					results = itoa(q.Results)
				}
				errText, warnings := joinTexts(q.Error, src.UnattributedError), q.Warning
				for _, w := range src.UnattributedWarnings {
					warnings = joinTexts(warnings, w)
				}
				row := []string{itoa(h.Iteration), src.Name, kindSearch, q.Query, timeText(h.SearchedAt),
					optInt(s.YearRange.From), optInt(s.YearRange.To), optInt(s.MaxResultsPerSource), results, totalText(q), errText, warnings}
				if q.Skipped { // no request, so nothing it carried or returned
					row = []string{itoa(h.Iteration), src.Name, kindSearch, "", "", "", "", "", "", "", notSentText(q), ""}
				}
				row = slices.Concat(row, []string{records}, iterCounts)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// notSent explains a query a source was not sent because nothing in it
// could be searched there.
const notSent = "not sent: nothing in the query this source can search"

// notSentText explains a query a source was not sent: its own error when
// it has one (the search was cancelled before the query left), else that
// nothing in it could be searched there.
func notSentText(q sent) string {
	if q.Error != "" {
		return "not sent: " + q.Error
	}
	return notSent
}

// optInt is n as text, "" for zero (an open year bound, no limit).
func optInt(n int) string {
	if n == 0 {
		return ""
	}
	return itoa(n)
}
