package named

import (
	"context"
	"fmt"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
)

// strategy is search.strategy: with {intent, sources?, max_per_source?}
// → {strategy, queries}. Without sources it searches every enabled
// source; max_per_source is each source's result cap (the builder's
// default when absent), at most research.MaxResultsLimit.
func strategy(d Deps) Skill {
	return func(ctx context.Context, in In) (map[string]any, error) {
		with := in.With
		intent, err := arg[research.ParsedIntent](with, "intent", true)
		if err != nil {
			return nil, err
		}
		q := skills.QueryInput{Intent: intent}
		if q.Sources, err = arg[[]string](with, "sources", false); err != nil {
			return nil, err
		}
		if len(q.Sources) == 0 {
			q.Sources = d.sourceNames()
		}
		if q.MaxResultsPerSource, err = arg[int](with, "max_per_source", false); err != nil {
			return nil, err
		}
		if q.MaxResultsPerSource < 0 || q.MaxResultsPerSource > research.MaxResultsLimit {
			return nil, fault.Errorf(fault.EInvalid, "with.max_per_source must be between 1 and %d", research.MaxResultsLimit)
		}
		st, err := d.Queries.BuildStrategy(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("build the strategy: %w", err)
		}
		if err := st.ValidateSources(d.sourceNames()); err != nil {
			return nil, fmt.Errorf("the query builder returned an invalid strategy: %w", err)
		}
		queries := make([]string, 0, len(st.Queries))
		for _, q := range st.Queries {
			queries = append(queries, q.Text)
		}
		return plain(map[string]any{"strategy": st, "queries": queries})
	}
}
