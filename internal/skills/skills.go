// Package skills names the six skills of the search pipeline as interfaces,
// with the inputs they take. Each implementation lives in its own package
// beside this one (intent, querybuilder, searcher, dedup, relevance,
// organize; llm for the model-backed variants), so the pipeline depends on
// what a skill does, never on how.
package skills

import (
	"context"
	"quarry/internal/research"
)

// The six skills of the search pipeline. Each has an offline default (pure
// heuristics, no network) and, where it helps, an LLM-backed variant; the
// SearchWorkflow only sees these interfaces.

// IntentParser turns a research question into a ParsedIntent.
type IntentParser interface {
	ParseIntent(ctx context.Context, question string) (research.ParsedIntent, error)
}

// QueryInput is everything the query builder may use: the intent, what was
// tried before and what the researcher said about it.
type QueryInput struct {
	Intent research.ParsedIntent `json:"intent"`
	// Previous holds the strategies of earlier iterations, oldest first; the
	// builder must not return a strategy identical to any of them.
	Previous []research.SearchStrategy `json:"previous,omitempty"`
	// Feedback holds the researcher's feedback of earlier iterations, oldest first.
	Feedback []research.UserFeedback `json:"feedback,omitempty"`
	// Marked holds the papers named in Feedback's marks, so the builder can
	// take terms from relevant papers and negate terms of irrelevant ones.
	Marked []research.ScoredPaper `json:"marked,omitempty"`
	// Collection holds the papers the last search found, marked or not:
	// the background against which a builder tells which words are
	// distinctive of the papers marked relevant (or irrelevant) rather
	// than common to everything the question finds.
	Collection []research.RawPaper `json:"collection,omitempty"`
	// Sources to search and the per-source result cap the run asked for.
	Sources             []string `json:"sources"`
	MaxResultsPerSource int      `json:"max_results_per_source"`
	// FieldsOfStudy restricts the search to these fields; it becomes the
	// strategy's filter. It is set only from a strategy the researcher
	// confirmed (checkpoint 1, carried to later iterations), never from
	// the intent's fields of study: those are the parser's guess from the
	// question's words, and a source's field filter (Semantic Scholar's
	// fieldsOfStudy) drops every paper classified outside it, so a wrong
	// guess ("depression" read as Psychology) would silently lose the
	// clinical trials.
	FieldsOfStudy []string `json:"fields_of_study,omitempty"`
	// RemovedLearnedTerms are exclusions a builder learned from the papers
	// marked irrelevant that the researcher then removed from a strategy
	// at checkpoint 1, in this run. A builder must not learn them again:
	// the researcher has seen the evidence and said the word is not a
	// reason to drop papers, and more marks of the same kind do not change
	// that. They stay removed for the run; the researcher can still
	// exclude the word themselves.
	RemovedLearnedTerms []string `json:"removed_learned_terms,omitempty"`
}

// QueryBuilder builds a SearchStrategy, recording each query exactly as each
// source will receive it.
type QueryBuilder interface {
	BuildStrategy(ctx context.Context, in QueryInput) (research.SearchStrategy, error)
}

// SearchResult is what a search over several sources returned. Sources maps
// each source to its count or error: one failing source never fails a search.
type SearchResult struct {
	Papers  []research.RawPaper              `json:"papers"`
	Sources map[string]research.SourceResult `json:"sources"`
}

// Searcher runs a strategy against its sources in parallel.
type Searcher interface {
	Search(ctx context.Context, s research.SearchStrategy) (SearchResult, error)
}

// Pager is a Searcher that can also fetch the next page of a strategy's
// queries ("Show more" at the review): from prev, the sources' results
// so far, it asks each query that has more for the records after those
// fetched, and returns each source's page alone (see
// research.SourceResult.WithPage).
type Pager interface {
	Searcher
	SearchMore(ctx context.Context, s research.SearchStrategy, prev map[string]research.SourceResult) (SearchResult, error)
}

// Deduplicator merges records of the same paper and marks likely versions of
// one another (preprint vs. publication) as related instead of merging them.
type Deduplicator interface {
	Dedup(ctx context.Context, papers []research.RawPaper) ([]research.RawPaper, research.DedupStats, error)
}

// ScoreInput is what the relevance scorer sees: the intent, the papers to
// score and the researcher's marks so far (across iterations).
type ScoreInput struct {
	Intent     research.ParsedIntent `json:"intent"`
	Papers     []research.RawPaper   `json:"papers"`
	Relevant   []research.RawPaper   `json:"relevant,omitempty"`
	Irrelevant []research.RawPaper   `json:"irrelevant,omitempty"`
}

// Scorer gives every paper a score in [0,1] with reasons a person can read.
type Scorer interface {
	Score(ctx context.Context, in ScoreInput) ([]research.ScoredPaper, error)
}

// Organizer groups scored papers into labelled themes, sorted by score
// within each group.
type Organizer interface {
	Organize(ctx context.Context, papers []research.ScoredPaper) ([]research.Group, error)
}

// Clarifier proposes the clarifying questions a run asks before it builds
// the strategy (issue 18 §6): none when the question is clear, otherwise
// at most research.MaxClarifyingQuestions with 2–3 options each
// (research.ValidateQuestions). It is optional: a pipeline without one
// asks nothing.
type Clarifier interface {
	Clarify(ctx context.Context, question string, intent research.ParsedIntent) ([]research.ClarifyingQuestion, error)
}
