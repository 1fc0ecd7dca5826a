package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"quarry/internal/research"
	"quarry/internal/skills/query"
)

// Rules of the strategy review (ReviewStrategy), as Finding.Rule names them.
const (
	RuleQueryNoResults    = "query_no_results"
	RuleConceptNoSynonym  = "concept_no_synonym"
	RuleConceptNotInQuery = "concept_not_searched"
	RuleNoDateLimit       = "no_date_limit"
	RuleSingleSource      = "single_source"
)

// ReviewStrategy is the quality gate's review of a strategy at checkpoint
// 1 (issue 18 §6): what a reviewer of a systematic search would point
// out, each finding with its severity. It asks no source: a query that
// found nothing is known from the run's own last search, whose per-query
// counts every source recorded (research.SourceResult.QueryResults), so
// the review is free and the same whenever it is asked. A query is found
// empty only when every source of the strategy ran it at the last search
// and none returned or counted a record; a source that failed, was not
// asked, or recorded no per-query counts leaves it unknown, so the MUST
// never rests on a guess. available are the sources the run could search.
func ReviewStrategy(intent research.ParsedIntent, s research.SearchStrategy, history []research.IterationRecord, available []string) []research.Finding {
	var out []research.Finding
	asts := make([]query.AST, len(s.Queries))
	for i, q := range s.Queries {
		asts[i], _ = query.Parse(q.Text) // unparseable queries are CheckStrategy's
	}
	out = append(out, emptyQueries(s, asts, history)...)
	out = append(out, conceptFindings(intent, asts)...)
	if s.YearRange.From == 0 && s.YearRange.To == 0 {
		out = append(out, research.Finding{Rule: RuleNoDateLimit, Severity: research.SeverityCould, Field: "year_range.from",
			Message: "No publication years are set: a search without a date limit is hard to repeat and to update; set Year from (and Year to) if the question allows."})
	}
	if len(s.Sources)+len(s.Files) == 1 && len(available) > 1 {
		out = append(out, research.Finding{Rule: RuleSingleSource, Severity: research.SeverityCould, Field: "sources",
			Message: "Only one source is searched: every database indexes a different part of the literature; tick a second source if you can."})
	}
	return out
}

// emptyQueries finds the strategy's queries the last search ran on every
// one of the strategy's sources and found nothing with.
func emptyQueries(s research.SearchStrategy, asts []query.AST, history []research.IterationRecord) []research.Finding {
	var last *research.IterationRecord
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Searched() {
			last = &history[i]
			break
		}
	}
	if last == nil || len(s.Sources) == 0 {
		return nil
	}
	var out []research.Finding
	for i, ast := range asts {
		if len(ast.Clauses) == 0 {
			continue
		}
		j := slices.IndexFunc(last.Strategy.Queries, func(q research.Query) bool { return canonical(q.Text) == ast.String() })
		if j < 0 {
			continue // not searched before: unknown
		}
		empty := true
		for _, src := range s.Sources {
			r, ok := last.Sources[src]
			if !ok || !r.HasQueryResults() || j >= len(r.QueryResults) {
				empty = false
				break
			}
			qr := r.QueryResults[j]
			if qr.Error != "" || qr.Count > 0 || qr.Total > 0 {
				empty = false
				break
			}
		}
		if empty {
			out = append(out, research.Finding{Rule: RuleQueryNoResults, Severity: research.SeverityMust, Field: fmt.Sprintf("queries[%d].text", i),
				Message: fmt.Sprintf("Query %d found nothing in any of the sources at iteration %d (%s): broaden it, fix it or remove it.",
					i+1, last.Iteration, strings.Join(s.Sources, ", "))})
		}
	}
	return out
}

// conceptFindings finds the question's concepts that no query searches
// with another word for them (an OR group), or that no query names.
func conceptFindings(intent research.ParsedIntent, asts []query.AST) []research.Finding {
	var out []research.Finding
	for _, c := range intent.Concepts {
		named, alternatives := false, false
		for _, ast := range asts {
			for _, cl := range ast.Clauses {
				if cl.Not || !slices.ContainsFunc(cl.Any, func(t query.Term) bool { return sameTerm(t.Text, c.Term) }) {
					continue
				}
				named = true
				alternatives = alternatives || len(cl.Any) > 1
			}
		}
		switch {
		case !named:
			out = append(out, research.Finding{Rule: RuleConceptNotInQuery, Severity: research.SeverityShould, Field: "queries",
				Message: fmt.Sprintf("The concept %q of the question is in no query: add it, or say in the note why it is left out.", c.Term)})
		case !alternatives:
			out = append(out, research.Finding{Rule: RuleConceptNoSynonym, Severity: research.SeverityShould, Field: "queries",
				Message: fmt.Sprintf("The concept %q is searched without a synonym: authors who use another word are missed; write it as (%s OR …).", c.Term, query.NewTerm(c.Term, false).String())})
		}
	}
	return out
}
