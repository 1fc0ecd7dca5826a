// Package report writes what a search run did in the form a systematic
// review must report it (PRISMA-S, the search-reporting extension of
// PRISMA): for every iteration and source, the query exactly as sent, when
// it ran, the filters and limits, how many records came back, errors,
// duplicates removed and what the researcher marked. Markdown is for
// people and appendices; CSV is for spreadsheets and review tools.
//
// It reads a run's decoded state (pipeline.RunState) and writes to an
// io.Writer; it knows nothing of HTTP or HTML.
package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// RunInfo is what the report says about the run itself, which the run's
// search state does not hold.
type RunInfo struct {
	ID string
	// Question is the research question; empty means the state's.
	Question string
	// StartedBy names who started the run; empty is reported as not
	// recorded rather than guessed.
	StartedBy string
	StartedAt time.Time
	Status    string
}

// timeText is t as RFC 3339 in UTC, the form PRISMA-S asks dates in and
// spreadsheets parse; "" for an unknown time.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// sent is one query as one source received it, and what it returned.
type sent struct {
	// Query is the text as sent; Skipped means nothing was sent: the
	// renderer found nothing this source can search, or (with Error
	// saying so) the search was cancelled before the query left.
	Query   string
	Skipped bool
	// Results is the records this query returned, before the source's
	// queries were merged. Counted is false where the run did not record
	// it: searches recorded before each query's result was kept, whose
	// only count is the source's (sourceRow.Result.Count).
	Results int
	Counted bool
	// Total is how many records the source said match the query (0 when
	// it did not say); more than Results when the limit cut the result.
	Total int
	// Pages is how many pages of its results were fetched: more than one
	// when the researcher asked the review to show more.
	Pages int
	// Error and Warning are this query's own.
	Error, Warning string
}

// sourceRow is what one source did in one iteration.
type sourceRow struct {
	Name    string
	Queries []sent
	Result  research.SourceResult
	// Known is false for iterations recorded before per-source results
	// were kept: the queries come from the strategy, counts are unknown.
	Known bool
	// Counted says each query's own count was recorded; without it the
	// source's count is reported once, for all its queries together,
	// never on a query's row.
	Counted bool
	// Unattributed are the source's error and warnings that could not be
	// tied to one query (see legacyByQuery); they are reported for the
	// source as a whole.
	UnattributedError    string
	UnattributedWarnings []string
	// File is set for a file attached to the run: its records joined the
	// search's, but nothing was queried, so it has no queries, years or
	// limit to report.
	File *research.AttachedFile
	// NotQueried is why a source of the strategy was sent nothing at all
	// (it is not configured), "" for a source that was queried. Such a
	// source has no queries, years or limit to report either.
	NotQueried string
}

// notQueried is why a source with a recorded result was sent nothing, ""
// when it was sent its queries. The searcher records the queries of every
// source it plans calls for (one per strategy query, "" for one it
// skips), so a result without any failed before a request was made; its
// error says why.
func notQueried(r research.SourceResult) string {
	if r.Queries != nil {
		return ""
	}
	if e := strings.TrimSpace(r.Error); e != "" {
		return e
	}
	return "no query was recorded as sent"
}

// notQueriedText says a source was not queried and why, e.g. "not
// queried: source "x" is not configured".
func notQueriedText(src sourceRow) string {
	return "not queried: " + strings.TrimRight(src.NotQueried, ". ")
}

// attachedFile returns the strategy's file recorded under the source name
// (see research.FileSourceName). A name with the file prefix that the
// strategy does not list (it cannot be a searchable source's) is still a
// file, known only by its name.
func attachedFile(s research.SearchStrategy, name string) (*research.AttachedFile, bool) {
	for _, f := range s.Files {
		if research.FileSourceName(f) == name {
			return &f, true
		}
	}
	if n, ok := strings.CutPrefix(name, research.FileSourceName(research.AttachedFile{})); ok {
		return &research.AttachedFile{Name: n}, true
	}
	return nil, false
}

// fileText says what an attached file contributed and that nothing was
// queried, e.g. "file attached: t1.ris (12 records), not queried". A file
// that could not be read has no count; its error is reported beside it.
func fileText(src sourceRow) string {
	var records string
	switch {
	case src.Known && src.Result.Error == "":
		records = " (" + plural(src.Result.Count, "record") + ")"
	case !src.Known && src.File.Records > 0:
		records = " (" + plural(src.File.Records, "record") + ")"
	}
	return fmt.Sprintf("file attached: %s%s, not queried", src.File.Name, records)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}

// sourcesOf lists what each source of a searched iteration was sent and
// returned, in the strategy's source order.
func sourcesOf(h research.IterationRecord) []sourceRow {
	names := slices.Clone(h.Strategy.Sources)
	var extra []string
	for name := range h.Sources {
		if !slices.Contains(names, name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	names = append(names, extra...)
	out := make([]sourceRow, 0, len(names))
	for _, name := range names {
		r, known := h.Sources[name]
		row := sourceRow{Name: name, Result: r, Known: known}
		if f, ok := attachedFile(h.Strategy, name); ok {
			row.File = f
			out = append(out, row)
			continue
		}
		if known {
			if row.NotQueried = notQueried(r); row.NotQueried != "" {
				out = append(out, row)
				continue
			}
		}
		texts := r.Queries
		if !known {
			texts = make([]string, len(h.Strategy.Queries))
			for i, q := range h.Strategy.Queries {
				t, ok := q.PerSource[name]
				if !ok {
					t = q.Text
				}
				texts[i] = t
			}
		}
		for _, t := range texts {
			row.Queries = append(row.Queries, sent{Query: t, Skipped: strings.TrimSpace(t) == ""})
		}
		if known {
			row.perQuery()
		}
		out = append(out, row)
	}
	return out
}

// perQuery fills in what each query of a queried source returned: its own
// count, error and warning where the searcher recorded them, else (runs
// recorded before it did) no count and the error and warnings as
// legacyByQuery can attribute them.
func (row *sourceRow) perQuery() {
	r := row.Result
	if r.HasQueryResults() {
		row.Counted = true
		for i, qr := range r.QueryResults {
			q := &row.Queries[i]
			q.Results, q.Counted, q.Error, q.Warning, q.Total, q.Pages = qr.Count, true, qr.Error, qr.Warning, qr.Total, qr.PageCount()
		}
		return
	}
	n := len(row.Queries)
	if errs, ok := legacyByQuery(r.Error, n); ok {
		for i, e := range errs {
			row.Queries[i].Error = e
		}
	} else {
		row.UnattributedError = r.Error
	}
	for _, w := range r.Warnings {
		ws, ok := legacyByQuery(w, n)
		if !ok {
			row.UnattributedWarnings = append(row.UnattributedWarnings, w)
			continue
		}
		for i, w := range ws {
			row.Queries[i].Warning = joinTexts(row.Queries[i].Warning, w)
		}
	}
}

// legacyByQuery splits a source's error (or one of its warnings) into
// its queries' texts, as the searcher wrote it before it recorded each
// query's own result: "query N: text" per failed query, joined with "; ",
// and the bare text when the strategy had one query. ok is false for text
// in no such form, which then belongs to no query in particular.
func legacyByQuery(text string, n int) (byQuery []string, ok bool) {
	byQuery = make([]string, n)
	if text == "" {
		return byQuery, true
	}
	cur := -1
	for piece := range strings.SplitSeq(text, "; ") {
		if qi, rest, ok := cutQueryPrefix(piece, n); ok {
			cur = qi
			byQuery[qi] = joinTexts(byQuery[qi], rest)
			continue
		}
		switch {
		case cur >= 0: // the text itself held "; "
			byQuery[cur] += "; " + piece
		case n == 1:
			byQuery[0] = text
			return byQuery, true
		default:
			return nil, false
		}
	}
	return byQuery, true
}

// cutQueryPrefix parses "query N: rest" for 1 ≤ N ≤ n, returning N's index.
func cutQueryPrefix(s string, n int) (qi int, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, "query ")
	if !ok {
		return 0, "", false
	}
	num, rest, ok := strings.Cut(s, ": ")
	if !ok {
		return 0, "", false
	}
	k, err := strconv.Atoi(num)
	if err != nil || k < 1 || k > n {
		return 0, "", false
	}
	return k - 1, rest, true
}

// joinTexts joins two texts with "; ", leaving out an empty one.
func joinTexts(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// sourceNames lists every source any searched iteration asked, every
// file attached to one, and every source a strategy named that no
// iteration queried, each in the order they first appear.
func sourceNames(history []research.IterationRecord) (searched, files, unqueried []string) {
	for _, h := range history {
		if !h.Searched() {
			continue
		}
		for _, r := range sourcesOf(h) {
			list := &searched
			switch {
			case r.File != nil:
				list = &files
			case r.NotQueried != "":
				list = &unqueried
			}
			if !slices.Contains(*list, r.Name) {
				*list = append(*list, r.Name)
			}
		}
	}
	unqueried = slices.DeleteFunc(unqueried, func(n string) bool { return slices.Contains(searched, n) })
	return searched, files, unqueried
}

// marks counts an iteration's marks (0, 0 without feedback).
func marks(h research.IterationRecord) (relevant, irrelevant int) {
	if h.Feedback == nil {
		return 0, 0
	}
	return len(h.Feedback.MarkedRelevant), len(h.Feedback.MarkedIrrelevant)
}

// history is the run's iterations in order.
func history(rs pipeline.RunState) []research.IterationRecord {
	h := slices.Clone(rs.Workflow.History)
	slices.SortStableFunc(h, func(a, b research.IterationRecord) int { return cmp.Compare(a.Iteration, b.Iteration) })
	return h
}

func itoa(n int) string { return strconv.Itoa(n) }

// resultsText is a query's Results cell: "25 of 49" when the source said
// more match than the limit let through, so a capped count never reads
// as all there is; else the count.
// A query whose next pages were fetched ("Show more") says how many
// pages: "49 (2 pages)".
func resultsText(q sent) string {
	text := itoa(q.Results)
	if f := (research.QueryResult{Count: q.Results, Total: q.Total}).Found(); f.Capped() {
		text = itoa(f.Shown) + " of " + itoa(f.Total)
	}
	if q.Pages > 1 {
		text += " (" + itoa(q.Pages) + " pages)"
	}
	return text
}

// totalText is a query's total as the source counted it, "" when it did
// not say.
func totalText(q sent) string {
	if q.Total <= 0 {
		return ""
	}
	return itoa(max(q.Total, q.Results))
}
