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
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/skills"
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

// sent is one query as one source received it.
type sent struct {
	// Query is the text as sent; Skipped means the renderer found nothing
	// this source can search, so nothing was sent.
	Query   string
	Skipped bool
}

// sourceRow is what one source did in one iteration.
type sourceRow struct {
	Name    string
	Queries []sent
	Result  skills.SourceResult
	// Known is false for iterations recorded before per-source results
	// were kept: the queries come from the strategy, counts are unknown.
	Known bool
}

// sourcesOf lists what each source of a searched iteration was sent and
// returned, in the strategy's source order.
func sourcesOf(h skills.IterationRecord) []sourceRow {
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
		texts := r.Queries
		if !known || texts == nil {
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
		out = append(out, row)
	}
	return out
}

// searchedSources lists every source any searched iteration asked, in the
// order they first appear.
func searchedSources(history []skills.IterationRecord) []string {
	var out []string
	for _, h := range history {
		if !h.Searched() {
			continue
		}
		for _, r := range sourcesOf(h) {
			if !slices.Contains(out, r.Name) {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

// marks counts an iteration's marks (0, 0 without feedback).
func marks(h skills.IterationRecord) (relevant, irrelevant int) {
	if h.Feedback == nil {
		return 0, 0
	}
	return len(h.Feedback.MarkedRelevant), len(h.Feedback.MarkedIrrelevant)
}

// history is the run's iterations in order.
func history(rs pipeline.RunState) []skills.IterationRecord {
	h := slices.Clone(rs.Workflow.History)
	slices.SortStableFunc(h, func(a, b skills.IterationRecord) int { return cmp.Compare(a.Iteration, b.Iteration) })
	return h
}

func itoa(n int) string { return strconv.Itoa(n) }
