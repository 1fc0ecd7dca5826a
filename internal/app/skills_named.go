package app

import (
	"context"
	"errors"
	"log/slog"

	"quarry/internal/engine/flow"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/named"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

// namedSkills are the skills definition files call by name, built from the
// same implementations and settings as the search workflow (NewSearch):
// the enabled sources, the local library searching st, the LLM-backed
// skills where a provider is configured. With no searchable source they
// still exist (files naming them load), and search.run says why it
// cannot search; an LLM that cannot be set up leaves the offline skills.
func namedSkills(s Search, st *store.Store, logger *slog.Logger) (flow.Skills, error) {
	opts, err := localOptions(s, st)
	if err != nil {
		return nil, err
	}
	lib, err := local.New(st, opts...)
	if err != nil {
		return nil, err
	}
	provider, err := llm.New(s.LLM)
	if err != nil {
		logger.Warn("workflow files' skills run offline: the LLM cannot be set up", "err", err)
		provider = nil
	}
	vectors, err := embed.New(s.Embed)
	if err != nil {
		logger.Warn("workflow files' scorer runs without embeddings: they cannot be set up", "err", err)
		vectors = nil
	}
	d := named.Deps{
		Intent:  llm.NewIntentParser(provider, intent.New(nil)),
		Queries: llm.NewQueryBuilder(provider, querybuilder.New()),
		Dedup:   dedup.New(),
		Scorer:  embed.NewScorer(vectors, llm.NewScorer(provider, relevance.Scorer{})),
	}
	srcs, err := s.buildSources(lib)
	switch {
	case errors.Is(err, ErrNoSources):
		d.SearchErr = err
	case err != nil:
		return nil, err
	default:
		d.Sources, d.SearchOptions = srcs, searcher.Options{SourceDeadline: s.SourceDeadline}
	}
	out := flow.Skills{}
	for name, sk := range named.New(d) {
		out[name] = func(ctx context.Context, in flow.Input) (map[string]any, error) {
			return sk(ctx, named.In{With: in.With, Progress: in.Progress})
		}
	}
	return out, nil
}
