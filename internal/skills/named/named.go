// Package named offers the search skills to workflow definition files by
// name (search.parse, search.run, papers.batch, ...): each takes a stage's
// evaluated `with` values and returns its outputs, kept JSON-friendly and
// small (papers travel as Paper summaries), because a definition's
// outputs are stored in the run with every transition. The
// implementations are the search pipeline's own skills, passed in as
// Deps; the app adapts each Skill to the engine's flow.Skill, so this
// package does not reach the engine.
package named

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"quarry/internal/fault"
	"quarry/internal/skills"
)

// Skill is one named handler: the stage's `with` values in, its outputs
// out. An error is a failed attempt of the stage.
type Skill func(ctx context.Context, with map[string]any) (map[string]any, error)

// Deps are the skill implementations the named handlers call: the same
// ones the search pipeline is built from.
type Deps struct {
	Intent  skills.IntentParser
	Queries skills.QueryBuilder
	// Searcher searches the enabled sources; nil when none can be
	// searched (search.run then fails with SearchErr).
	Searcher  skills.Searcher
	SearchErr error
	// Sources are the enabled sources' names: what a strategy searches
	// when its stage names none.
	Sources []string
	Dedup   skills.Deduplicator
	Scorer  skills.Scorer
}

// New returns every named skill, by name.
func New(d Deps) map[string]Skill {
	return map[string]Skill{
		"search.parse":    parse(d),
		"search.strategy": strategy(d),
		"search.run":      run(d),
		"search.dedup":    dedup(d),
		"search.score":    score(d),
		"papers.new_only": newOnly,
		"papers.batch":    batch,
		"papers.keep":     keep,
		"papers.export":   export,
	}
}

// Names lists the skills New returns, sorted: what a definition file may
// call (def.Options.Skills), known without building any skill, so a file
// is checked alike by the CLI and the server.
func Names() []string {
	out := make([]string, 0, 9)
	for n := range New(Deps{}) {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// arg decodes with[key] into T through JSON, since values arrive as a
// definition's evaluated templates (maps, lists, numbers). A missing or
// null value is T's zero value, an error when required.
func arg[T any](with map[string]any, key string, required bool) (T, error) {
	var out T
	v, ok := with[key]
	if !ok || v == nil {
		if required {
			return out, fault.Errorf(fault.EInvalid, "with.%s is required", key)
		}
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return out, fault.Errorf(fault.EInvalid, "with.%s: %v", key, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fault.Errorf(fault.EInvalid, "with.%s has the wrong shape: %v", key, err)
	}
	return out, nil
}

// plain turns outputs into JSON values (maps, lists, numbers), the form
// they take once stored, so expressions see the same thing on the first
// run and after a restart.
func plain(out map[string]any) (map[string]any, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	return back, nil
}
