package named_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/named"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/sources"
)

// fakeSource answers every query with the same papers, one of them twice
// (by DOI) so dedup has something to merge, and records the cap asked.
type fakeSource struct{ asked *atomic.Int64 }

func (fakeSource) Name() string { return research.SourceLocal }

func (s fakeSource) Search(_ context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	s.asked.Store(int64(req.MaxResults)) // queries run concurrently
	var out []research.RawPaper
	for i := range 5 {
		out = append(out, research.RawPaper{ID: fmt.Sprintf("p%d", i), Title: fmt.Sprintf("Sleep and memory consolidation, study %d", i),
			Abstract: "Sleep consolidates memory.", DOI: fmt.Sprintf("10.1/%d", i), Year: 2020 + i, Source: research.SourceLocal})
	}
	out = append(out, research.RawPaper{ID: "dup", Title: "Sleep and memory consolidation, study 0", Year: 2020, Source: research.SourceLocal})
	return out, nil
}

func setup(t *testing.T) (map[string]named.Skill, *atomic.Int64) {
	t.Helper()
	asked := new(atomic.Int64)
	return named.New(named.Deps{Intent: intent.New(nil), Queries: querybuilder.New(),
		Sources: []sources.Source{fakeSource{asked: asked}}, Dedup: dedup.New(), Scorer: relevance.Scorer{}}), asked
}

// call runs a skill and round-trips its outputs through JSON, as the run's
// state stores them, so the next call sees what a definition passes on.
func call(t *testing.T, sk map[string]named.Skill, name string, with map[string]any) map[string]any {
	t.Helper()
	var lines []string
	out, err := sk[name](context.Background(), named.In{With: with, Progress: func(m string, _ any) { lines = append(lines, m) }})
	require.NoError(t, err, name)
	if name == "search.run" {
		require.Contains(t, lines, "local: 6 found", "each source's progress")
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back))
	return back
}

// TestSkillsChain: the named skills run one after another as a definition
// calls them, each taking the last one's JSON outputs: the cap reaches
// the sources, duplicates merge, scores sort, new_only and batch remember
// what they handed out, keep takes positions, export writes RIS.
func TestSkillsChain(t *testing.T) {
	t.Parallel()
	sk, asked := setup(t)
	parsed := call(t, sk, "search.parse", map[string]any{"question": "Does sleep help memory consolidation?"})
	st := call(t, sk, "search.strategy", map[string]any{"intent": parsed["intent"], "max_per_source": 300})
	require.NotEmpty(t, st["queries"])
	found := call(t, sk, "search.run", map[string]any{"strategy": st["strategy"]})
	require.EqualValues(t, 300, asked.Load(), "the cap from with reaches the source")
	require.Len(t, found["papers"], 6)
	deduped := call(t, sk, "search.dedup", map[string]any{"papers": found["papers"]})
	require.Len(t, deduped["papers"], 5)
	require.EqualValues(t, 1, deduped["merged"])
	scored := call(t, sk, "search.score", map[string]any{"intent": parsed["intent"], "papers": deduped["papers"]})
	papers := scored["papers"].([]any)
	require.Len(t, papers, 5)
	for i := 1; i < len(papers); i++ {
		require.GreaterOrEqual(t, papers[i-1].(map[string]any)["score"], papers[i].(map[string]any)["score"], "best first")
	}

	id := func(i int) any { return papers[i].(map[string]any)["id"] }
	fresh := call(t, sk, "papers.new_only", map[string]any{"papers": papers, "seen": []any{id(1), id(2)}})
	require.EqualValues(t, 3, fresh["count"])
	require.Len(t, fresh["seen"], 5)
	again := call(t, sk, "papers.new_only", map[string]any{"papers": papers, "seen": fresh["seen"]})
	require.EqualValues(t, 0, again["count"])
	require.Equal(t, []any{}, again["papers"], "an empty list, not null, so len() works")

	b1 := call(t, sk, "papers.batch", map[string]any{"papers": papers, "size": 2})
	require.Len(t, b1["batch"], 2)
	require.EqualValues(t, 3, b1["remaining"])
	require.EqualValues(t, 2, b1["batch"].([]any)[1].(map[string]any)["position"], "what a person types to keep it")
	b2 := call(t, sk, "papers.batch", map[string]any{"papers": papers, "size": 2, "screened": b1["screened"]})
	require.NotEqual(t, b1["batch"], b2["batch"])
	require.EqualValues(t, 1, b2["remaining"])

	kept := call(t, sk, "papers.keep", map[string]any{"batch": b1["batch"]})
	require.EqualValues(t, 2, kept["count"], "no pick keeps the whole batch")
	kept = call(t, sk, "papers.keep", map[string]any{"kept": kept["kept"], "batch": b2["batch"], "pick": "2"})
	require.EqualValues(t, 3, kept["count"])
	require.Equal(t, b2["batch"].([]any)[1].(map[string]any)["id"], kept["kept"].([]any)[2].(map[string]any)["id"], "position 2 of the batch")
	require.NotContains(t, kept["kept"].([]any)[2], "position")
	typo := call(t, sk, "papers.keep", map[string]any{"kept": kept["kept"], "batch": b2["batch"], "pick": "7, 1"})
	require.EqualValues(t, 4, typo["count"], "position 1 kept")
	require.Equal(t, []any{"7"}, typo["ignored"], "a word naming no paper is reported, not fatal")

	out := call(t, sk, "papers.export", map[string]any{"papers": kept["kept"]})
	require.Equal(t, "ris", out["format"])
	require.EqualValues(t, 3, out["count"])
	require.Contains(t, out["text"], "TY  - ")
	_, err := sk["papers.export"](context.Background(), named.In{With: map[string]any{"papers": kept["kept"], "format": "doc"}})
	require.Error(t, err)
}

// TestNames: Names lists every skill New builds, without building any.
func TestNames(t *testing.T) {
	t.Parallel()
	sk, _ := setup(t)
	require.Len(t, named.Names(), len(sk))
	for _, n := range named.Names() {
		require.Contains(t, sk, n)
	}
}

// TestRunWithoutSources: a server with nothing to search still offers
// search.run (a file naming it loads), which fails with why.
func TestRunWithoutSources(t *testing.T) {
	t.Parallel()
	sk := named.New(named.Deps{SearchErr: fmt.Errorf("no source can be searched")})
	_, err := sk["search.run"](context.Background(), named.In{With: map[string]any{"strategy": map[string]any{}}})
	require.ErrorContains(t, err, "no source")
}
