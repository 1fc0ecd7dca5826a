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
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
)

// Skill is one named handler: the stage's `with` values in, its outputs
// out. An error is a failed attempt of the stage.
type Skill func(ctx context.Context, in In) (map[string]any, error)

// In is what a skill is given: the stage's evaluated `with` values and
// where to report progress (the run page's progress lines; nil for none).
type In struct {
	With     map[string]any
	Progress func(message string, data any)
}

// progress reports a line when anyone listens.
func (in In) progress(message string, data any) {
	if in.Progress != nil {
		in.Progress(message, data)
	}
}

// Deps are the skill implementations the named handlers call: the same
// ones the search pipeline is built from.
type Deps struct {
	Intent  skills.IntentParser
	Queries skills.QueryBuilder
	// Sources are the enabled sources, searched by a searcher built for
	// each search.run (so its progress goes to that run) with
	// SearchOptions; a strategy without sources searches them all. None
	// means nothing can be searched: search.run fails with SearchErr.
	Sources       []sources.Source
	SearchOptions searcher.Options
	SearchErr     error
	Dedup         skills.Deduplicator
	Scorer        skills.Scorer
}

// New returns every named skill, by name.
func New(d Deps) map[string]Skill {
	return map[string]Skill{
		"search.parse":    parse(d),
		"search.strategy": strategy(d),
		"search.run":      run(d),
		"search.dedup":    dedup(d),
		"search.score":    score(d),
		"papers.new_only": withOnly(newOnly),
		"papers.batch":    withOnly(batch),
		"papers.keep":     withOnly(keep),
		"papers.export":   withOnly(export),
	}
}

// withOnly is a skill that needs only its `with` values.
func withOnly(f func(ctx context.Context, with map[string]any) (map[string]any, error)) Skill {
	return func(ctx context.Context, in In) (map[string]any, error) { return f(ctx, in.With) }
}

// sourceNames are the names of the enabled sources.
func (d Deps) sourceNames() []string {
	out := make([]string, 0, len(d.Sources))
	for _, s := range d.Sources {
		out = append(out, s.Name())
	}
	return out
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
