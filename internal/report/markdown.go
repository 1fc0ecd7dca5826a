package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// SearchStrategyMarkdown writes the run's search-strategy report: the run
// (question, ID, who started it and when), the sources searched and files
// attached, then per iteration the year range, limit and the strategy's
// filters (once: a source received them only as far as its query as sent
// shows) and, per source, what each request carried and returned: the
// query exactly as sent (as a code span a reader can copy, or a fenced
// block when a table cell cannot hold it verbatim), when it ran, the
// years, the limit, the records it returned and its error; then the
// records the source contributed (its queries' results merged, a record
// two queries returned counted once; for searches recorded before each
// query's count was kept, the only count, said once for the source) and
// the source's warnings (not errors); an attached file is reported as
// attached, not queried, and a source sent nothing (not configured) as
// not queried, with why, never with the strategy's queries; then the
// duplicates removed, the papers marked and the researcher's feedback;
// the notes the skills left (fallbacks); and totals at the end.
func SearchStrategyMarkdown(w io.Writer, info RunInfo, rs pipeline.RunState) error {
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	hist := history(rs)
	question := info.Question
	if question == "" {
		question = rs.Question
	}
	p("# Search strategy report\n\n")
	p("- Research question: %s\n", inline(question))
	p("- Run ID: %s\n", codeSpan(info.ID))
	p("- Started by: %s\n", orNot(inline(info.StartedBy), "not recorded"))
	p("- Started at: %s\n", orNot(timeText(info.StartedAt), "not recorded"))
	if info.Status != "" {
		p("- Status: %s\n", inline(info.Status))
	}
	srcs, files, unqueried := sourceNames(hist)
	p("- Databases and sources searched: %s\n", orNot(inline(strings.Join(srcs, ", ")), noneSearched(info, rs, hist)))
	if len(unqueried) > 0 {
		p("- Sources in the strategy but not queried (see each iteration for why): %s\n", inline(strings.Join(unqueried, ", ")))
	}
	if len(files) > 0 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = strings.TrimPrefix(f, research.FileSourceName(research.AttachedFile{}))
		}
		p("- Files attached (their records joined the results; not queried): %s\n", inline(strings.Join(names, ", ")))
	}
	if rs.Intent != nil && len(rs.Intent.Concepts) > 0 {
		p("- Concepts: %s\n", inline(research.ConceptList(rs.Intent.Concepts)))
	}
	p("\nTimes are UTC (RFC 3339). Queries are shown exactly as each source received them. ")
	p("A query's results are the records it returned; a source's records merge its queries' results, ")
	p("counting a record that several of them returned once, so they can be fewer than its queries' results added up. ")
	p("\"25 of 49\" means the query returned 25 records (the limit) of the 49 the source said match it.\n")

	titles := paperTitles(rs)
	var totalResults, totalAfterDedup, searches int
	perSource := map[string]int{}
	for _, h := range hist {
		p("\n## Iteration %d\n\n", h.Iteration)
		if !h.Searched() {
			p("Strategy rejected at confirmation; nothing was searched. Proposed queries:\n\n")
			for i, q := range h.Strategy.Queries {
				p("%d. %s\n", i+1, codeSpan(oneLine(q.Text)))
			}
			writeFeedback(p, h.Feedback, titles)
			continue
		}
		searches++
		p("- Searched at: %s\n", orNot(timeText(h.SearchedAt), "not recorded"))
		p("- Years: %s\n", yearsText(h.Strategy.YearRange))
		p("- Limit per source: %s\n", orNot(optInt(h.Strategy.MaxResultsPerSource), "none"))
		if f := filtersText(h.Strategy.Filters); f != "" {
			p("- Strategy filters (a source received them only as far as its query as sent below shows): %s\n", inline(f))
		}
		if len(h.Strategy.Queries) > 0 {
			p("- Queries (as written): ")
			for i, q := range h.Strategy.Queries {
				if i > 0 {
					p("; ")
				}
				p("%s", codeSpan(oneLine(q.Text)))
			}
			p("\n")
		}
		for _, src := range sourcesOf(h) {
			p("\n### %s\n\n", inline(src.Name))
			if src.Known {
				totalResults += src.Result.Count
				perSource[src.Name] += src.Result.Count
			}
			if src.File != nil {
				p("%s.\n", capitalize(inline(fileText(src))))
				if e := inline(src.Result.Error); e != "" {
					p("\nError: %s\n", e)
				}
				continue
			}
			if src.NotQueried != "" {
				p("%s.\n", capitalize(inline(notQueriedText(src))))
				continue
			}
			p("| # | Query as sent | Searched at | Years | Limit | Results | Error |\n")
			p("|---|---|---|---|---|---|---|\n")
			var blocks []string
			for i, q := range src.Queries {
				cell, errText := codeSpan(q.Query), cellText(q.Error)
				at, years, limit := orNot(timeText(h.SearchedAt), "—"), yearsText(h.Strategy.YearRange), orNot(optInt(h.Strategy.MaxResultsPerSource), "none")
				results := "not recorded"
				if q.Counted {
					results = resultsText(q)
				}
				if src.UnattributedError != "" && errText == "" {
					errText = "see below"
				}
				switch {
				case q.Skipped: // no request, so nothing it carried or returned
					cell, errText, at, years, limit, results = "(not sent)", cellText(notSentText(q)), "—", "—", "—", "—"
				case !fitsCell(q.Query):
					cell = fmt.Sprintf("query %d, below", i+1)
					blocks = append(blocks, fmt.Sprintf("Query %d as sent to %s:\n\n%s", i+1, inline(src.Name), fenced(q.Query)))
				}
				p("| %d | %s | %s | %s | %s | %s | %s |\n", i+1, cell, at, years, limit, results, orNot(errText, "—"))
			}
			writeSourceRecords(p, src)
			for _, bl := range blocks {
				p("\n%s", bl)
			}
			writeWarnings(p, src.Result.Warnings)
		}
		totalAfterDedup += h.Dedup.Output
		p("\n- Duplicates: %d records in, %d after deduplication (%d merged as duplicates, %d kept apart as related versions).\n",
			h.Dedup.Input, h.Dedup.Output, h.Dedup.Merged, h.Dedup.Related)
		p("- Papers shown for review: %d\n", h.ResultCount)
		writeFeedback(p, h.Feedback, titles)
	}

	if len(rs.Notes) > 0 {
		p("\n## Notes from the run\n\n")
		p("What the skills reported about how they worked, such as falling back to the offline heuristics.\n\n")
		for _, n := range rs.Notes {
			p("- %s: %s\n", inline(strings.ReplaceAll(n.Skill, "_", " ")), inline(n.Message))
		}
	}

	if u := rs.LLMUsage; u != nil && (u.Calls > 0 || u.Skipped > 0) {
		p("\n## Language model use\n\n")
		p("- Calls: %d (%d tokens in, %d tokens out; %s in all)\n", u.Calls, u.TokensIn, u.TokensOut, u.Latency.Round(time.Millisecond))
		if u.Skipped > 0 {
			p("- Requests not sent because the run's token budget was spent: %d (the offline skills answered instead; see the notes)\n", u.Skipped)
		}
	}

	p("\n## Totals\n\n")
	p("- Iterations: %d (%d searched)\n", len(hist), searches)
	p("- Records retrieved (per source, its queries' results merged; before deduplication across sources): %d", totalResults)
	if all := slices.Concat(srcs, files); len(all) > 0 {
		parts := make([]string, 0, len(all))
		for _, s := range all {
			parts = append(parts, fmt.Sprintf("%s %d", s, perSource[s]))
		}
		p(" (%s)", inline(strings.Join(parts, ", ")))
	}
	p("\n- Records after deduplication, summed over iterations: %d\n", totalAfterDedup)
	p("- Papers marked relevant (kept): %d\n", len(rs.Workflow.AccumulatedPapers))
	p("- Papers marked irrelevant: %d\n", len(rs.MarkedIrrelevant))
	if rs.Final != nil {
		p("- Final collection: %d papers\n", len(rs.Final.Papers))
	}
	return b.Flush()
}

// writeSourceRecords says, under a source's table, how many records the
// source contributed: its queries' results merged, which is what the
// totals add up. For a search recorded before each query's count was kept
// it is the only count, said once for all the queries, since putting it
// on each query's row would credit every query with all the source's
// records; an error that names no single query is said here too.
func writeSourceRecords(p func(string, ...any), src sourceRow) {
	if !src.Known {
		return
	}
	switch {
	case src.Counted:
		p("\nRecords from this source: %d (its queries' results merged; a record more than one query returned counts once)", src.Result.Count)
		f, pages := src.Result.Found(), src.Result.Pages()
		switch {
		case pages > 1: // the review showed more: which pages, and what they came to
			p("; %s, %d pages (the first, then %d more the review asked for)", f, pages, pages-1)
		case f.Capped():
			p("; %s", f)
		}
		p(".\n")
	default:
		p("\nRecords from this source, all its queries together: %d (this search did not record each query's own count).\n", src.Result.Count)
	}
	if e := inline(src.UnattributedError); e != "" {
		p("\nError (not recorded per query): %s\n", e)
	}
}

// writeWarnings lists what a source said about the results it returned
// (PubMed leaving out terms), apart from the table's errors: the results
// stand, but for the query the source ran, which a reader must know.
func writeWarnings(p func(string, ...any), warnings []string) {
	if len(warnings) == 0 {
		return
	}
	p("\nWarnings (not errors: the results above stand, for the query as the source ran it):\n\n")
	for _, w := range warnings {
		p("- %s\n", inline(w))
	}
}

// writeFeedback writes what the researcher marked and said at a review.
func writeFeedback(p func(string, ...any), fb *research.UserFeedback, titles map[string]string) {
	if fb == nil {
		p("\nNo review decision recorded.\n")
		return
	}
	p("\n- Marked relevant: %d%s\n", len(fb.MarkedRelevant), paperList(fb.MarkedRelevant, titles))
	p("- Marked irrelevant: %d%s\n", len(fb.MarkedIrrelevant), paperList(fb.MarkedIrrelevant, titles))
	if t := strings.TrimSpace(fb.FreeTextFeedback); t != "" {
		p("\nResearcher feedback:\n\n")
		for line := range strings.SplitSeq(t, "\n") {
			p("> %s\n", inline(strings.TrimRight(line, "\r")))
		}
	}
}

// paperList names marked papers by title (and ID), for the reader to check.
func paperList(ids []string, titles map[string]string) string {
	if len(ids) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ids))
	for _, id := range ids {
		if t := titles[id]; t != "" {
			parts = append(parts, inline(t)+" ("+codeSpan(id)+")")
		} else {
			parts = append(parts, codeSpan(id))
		}
	}
	return ": " + strings.Join(parts, "; ")
}

// paperTitles maps the IDs of every paper the state holds to its title.
func paperTitles(rs pipeline.RunState) map[string]string {
	out := map[string]string{}
	add := func(ps []research.ScoredPaper) {
		for _, p := range ps {
			out[p.ID] = p.Title
		}
	}
	if rs.Final != nil {
		add(rs.Final.Papers)
	}
	if rs.Collection != nil {
		add(rs.Collection.Papers)
	}
	add(rs.Workflow.AccumulatedPapers)
	add(rs.MarkedIrrelevant)
	return out
}

// filtersText describes the strategy's filters in one line, "" when it
// has none. A source receives them only in the form its query as sent
// shows (include and exclude terms as query clauses, fields of study as
// Semantic Scholar's fieldsOfStudy), so the report lists them once per
// iteration and never beside a query.
func filtersText(f research.Filters) string {
	var parts []string
	for _, l := range []struct {
		label string
		terms []string
	}{{"include", f.IncludeTerms}, {"exclude", f.ExcludeTerms}, {"fields of study", f.FieldsOfStudy}, {"study types", f.StudyTypes}} {
		if len(l.terms) > 0 {
			parts = append(parts, l.label+": "+strings.Join(l.terms, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// yearsText is the publication-year range every source was sent, "any"
// when open at both ends.
func yearsText(y research.YearRange) string {
	if y.From == 0 && y.To == 0 {
		return "any"
	}
	return fmt.Sprintf("%s–%s", orNot(optInt(y.From), "…"), orNot(optInt(y.To), "…"))
}

// capitalize upper-cases a sentence's first letter (ASCII, as the report's
// own sentences start).
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// noneSearched is what the report says when no source was searched. "none
// yet" promises searches to come, true only while the run goes on; a run
// that ended without reaching a search (its strategy rejected at the last
// iteration, or canceled first) says so, since a reader of the report
// must not take it for one still in progress.
func noneSearched(info RunInfo, rs pipeline.RunState, hist []research.IterationRecord) string {
	if !rs.Workflow.IsComplete && !engine.Status(info.Status).IsComplete() {
		return "none yet"
	}
	if slices.ContainsFunc(hist, research.IterationRecord.Searched) {
		return "none" // searched, but only attached files or unconfigured sources
	}
	return "none: the run ended before searching"
}

func orNot(s, missing string) string {
	if s == "" {
		return missing
	}
	return s
}

// inline flattens text from the run's data onto one line for a list item,
// heading or table cell, with <, > and & written as entities: a title or
// question holding "<script>" must reach a Markdown renderer as text, not
// as HTML it passes through. Entities keep the text readable once
// rendered, in every Markdown dialect. Queries are not inline text: they
// are shown verbatim in code spans and blocks, where no markup is read.
func inline(s string) string { return markupEscaper.Replace(strings.Join(strings.Fields(s), " ")) }

var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// oneLine puts a query as written on one line for a list item; the query
// as sent is always shown verbatim in its source's table or block.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// cellText is inline text safe in a table cell.
func cellText(s string) string { return strings.ReplaceAll(inline(s), "|", `\|`) }

// fitsCell reports whether a query can stand verbatim in a table cell's
// code span: no line breaks and no pipe (which a table would need escaped).
func fitsCell(q string) bool { return !strings.ContainsAny(q, "|\r\n") }

// codeSpan renders s as a Markdown code span that shows s exactly: the
// fence is longer than any run of backticks in s, and padded with spaces
// (which Markdown strips) when s starts or ends with a backtick or space.
func codeSpan(s string) string {
	if s == "" {
		return "(empty)"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// fenced renders s as a fenced code block that holds it verbatim.
func fenced(s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "text\n" + s + "\n" + fence + "\n"
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
