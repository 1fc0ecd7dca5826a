package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
)

func rules(fs []research.Finding) map[string]research.Severity {
	out := map[string]research.Severity{}
	for _, f := range fs {
		out[f.Rule+" "+f.Field] = f.Severity
	}
	return out
}

func TestReviewStrategy(t *testing.T) {
	t.Parallel()
	intent := research.ParsedIntent{Topic: "t", Concepts: []research.Concept{{Term: "raft"}, {Term: "paxos"}, {Term: "sqlite"}}}
	s := research.SearchStrategy{
		Queries: []research.Query{{Text: "(raft OR consensus) AND paxos"}, {Text: "raft wal"}},
		Sources: []string{"alpha", "beta"}, YearRange: research.YearRange{From: 2010},
	}
	searched := func(per map[string][]research.QueryResult) []research.IterationRecord {
		rec := research.IterationRecord{Iteration: 1, Strategy: s, Sources: map[string]research.SourceResult{}}
		for src, qrs := range per {
			rec.Sources[src] = research.SourceResult{Queries: []string{"q1", "q2"}, QueryResults: qrs}
		}
		return []research.IterationRecord{rec}
	}
	empty := []research.QueryResult{{Count: 3}, {Count: 0}}
	tests := []struct {
		name    string
		s       func(research.SearchStrategy) research.SearchStrategy
		history []research.IterationRecord
		want    map[string]research.Severity
	}{
		{"FirstIteration", nil, nil, map[string]research.Severity{
			"concept_no_synonym queries": research.SeverityShould, "concept_not_searched queries": research.SeverityShould}},
		{"QueryFoundNothingEverywhere", nil, searched(map[string][]research.QueryResult{"alpha": empty, "beta": empty}), map[string]research.Severity{
			"query_no_results queries[1].text": research.SeverityMust,
			"concept_no_synonym queries":       research.SeverityShould, "concept_not_searched queries": research.SeverityShould}},
		{"OneSourceFailed", nil, searched(map[string][]research.QueryResult{"alpha": empty, "beta": {{Count: 1}, {Error: "503"}}}), map[string]research.Severity{
			"concept_no_synonym queries": research.SeverityShould, "concept_not_searched queries": research.SeverityShould}},
		{"ASourceNotAskedBefore", nil, searched(map[string][]research.QueryResult{"alpha": empty}), map[string]research.Severity{
			"concept_no_synonym queries": research.SeverityShould, "concept_not_searched queries": research.SeverityShould}},
		{"CountedButCapped", nil, searched(map[string][]research.QueryResult{"alpha": empty, "beta": {{Count: 1}, {Total: 9}}}), map[string]research.Severity{
			"concept_no_synonym queries": research.SeverityShould, "concept_not_searched queries": research.SeverityShould}},
		{"NoYearsOneSource", func(s research.SearchStrategy) research.SearchStrategy {
			s.YearRange, s.Sources = research.YearRange{}, []string{"alpha"}
			s.Queries = []research.Query{{Text: "(raft OR consensus) AND (paxos OR agreement) AND (sqlite OR sqlite3)"}}
			return s
		}, nil, map[string]research.Severity{
			"no_date_limit year_range.from": research.SeverityCould, "single_source sources": research.SeverityCould}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := s
			if tt.s != nil {
				got = tt.s(s)
			}
			require.Equal(t, tt.want, rules(pipeline.ReviewStrategy(intent, got, tt.history, []string{"alpha", "beta"})))
		})
	}
}

// waitAtStrategy starts a run with params and returns it at its first
// strategy checkpoint.
func waitAtStrategy(t *testing.T, params map[string]any) (*engine.Engine, *store.Store, engine.Run, engine.Checkpoint) {
	t.Helper()
	st := openStore(t)
	sk, _ := fakeSkills(poolSource{"alpha"}, poolSource{"beta"})
	wf, err := pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	eng := newEngine(t, st, wf, engine.Pending())
	ctx := context.Background()
	run, err := eng.Start(ctx, pipeline.Name, params)
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, run.ID))
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusWaiting, run.Status)
	cp, _, err := st.Checkpoint(ctx, run.CheckpointID)
	require.NoError(t, err)
	return eng, st, run, cp
}

// TestQualityGateRefusesABlockedApproval: with the quality gate on, the
// strategy checkpoint lists its findings, every one blocking at iteration
// 1; approving as is is refused, naming them, and approving anyway with
// a note is taken and noted in the run. With the gate off (the default)
// the same findings are warnings and approval goes through.
func TestQualityGateRefusesABlockedApproval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, st, run, cp := waitAtStrategy(t, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamQualityGate: true})
	require.Equal(t, pipeline.KindStrategyConfirmation, cp.Kind)
	p, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
	require.NoError(t, err)
	require.True(t, p.QualityGate)
	got := rules(p.Findings)
	require.Equal(t, research.SeverityCould, got["no_date_limit year_range.from"])
	require.Equal(t, research.SeverityShould, got["concept_no_synonym queries"])
	for _, f := range p.Findings {
		require.True(t, f.Blocks, "at iteration 1 every finding blocks: %+v", f)
	}

	err = eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["note"], "Approval refused")
	require.Contains(t, fault.ErrorFields(err)["note"], "COULD: No publication years are set")
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, cp.ID, run.CheckpointID, "the refused approval decided nothing")

	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann", Note: "a scoping search; years do not matter"}))
	require.NoError(t, eng.Advance(ctx, run.ID))
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	rs, err := pipeline.StateOf(run)
	require.NoError(t, err)
	var noted bool
	for _, n := range rs.Notes {
		if n.Skill == "strategy review" {
			noted = true
			require.Contains(t, n.Message, "approved anyway by ann")
			require.Contains(t, n.Message, "a scoping search; years do not matter")
		}
	}
	require.True(t, noted, "the override is recorded: %+v", rs.Notes)

	// The gate off: the same findings, none blocking.
	eng, _, run, cp = waitAtStrategy(t, map[string]any{pipeline.ParamQuestion: "sqlite durability"})
	p, err = engine.PayloadAs[pipeline.StrategyPayload](cp)
	require.NoError(t, err)
	require.False(t, p.QualityGate)
	require.NotEmpty(t, p.Findings)
	require.Empty(t, research.Blocking(p.Findings))
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann"}))
}

// TestQualityGateEditFixesTheFindings: an edit that fixes every blocking
// finding is taken without a note; one that leaves them is refused.
func TestQualityGateEditFixesTheFindings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, _, run, cp := waitAtStrategy(t, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamQualityGate: true})
	edit := func(text string, years research.YearRange) engine.Decision {
		return engine.Decision{Action: engine.Edit, DecidedBy: "ann", RevisedData: mustJSON(t, research.SearchStrategy{
			Queries: []research.Query{{Text: text}}, Sources: []string{"alpha", "beta"}, MaxResultsPerSource: 5, YearRange: years})}
	}
	err := eng.Decide(ctx, run.ID, cp.ID, edit("sqlite durability", research.YearRange{From: 2015}))
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["note"], `SHOULD: The concept "sqlite" is searched without a synonym`)
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, edit("(sqlite OR sqlite3) AND (durability OR persistence)", research.YearRange{From: 2015})))
}

// TestQualityGateRelaxesByIteration: the same kinds of finding block
// less as the run iterates: at iteration 3 the COULD (no date limit) is
// a warning and the SHOULD still blocks; from 5 only a MUST would.
func TestQualityGateRelaxesByIteration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, st, run, cp := waitAtStrategy(t, map[string]any{pipeline.ParamQuestion: "sqlite durability", pipeline.ParamQualityGate: true})
	blocks := map[int]map[string]bool{}
	for it := 1; it <= 5; it++ {
		require.Equal(t, it, cp.Iteration)
		p, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
		require.NoError(t, err)
		blocks[it] = map[string]bool{}
		for _, f := range p.Findings {
			blocks[it][f.Rule] = f.Blocks
		}
		if it == 5 {
			break
		}
		require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Reject, DecidedBy: "ann"}), "rejecting is never blocked")
		require.NoError(t, eng.Advance(ctx, run.ID))
		run, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		cp, _, err = st.Checkpoint(ctx, run.CheckpointID)
		require.NoError(t, err)
	}
	for it, want := range map[int]map[string]bool{
		1: {pipeline.RuleNoDateLimit: true, pipeline.RuleConceptNoSynonym: true},
		2: {pipeline.RuleNoDateLimit: true, pipeline.RuleConceptNoSynonym: true},
		3: {pipeline.RuleNoDateLimit: false, pipeline.RuleConceptNoSynonym: true},
		4: {pipeline.RuleNoDateLimit: false, pipeline.RuleConceptNoSynonym: true},
		5: {pipeline.RuleNoDateLimit: false, pipeline.RuleConceptNoSynonym: false},
	} {
		require.Equal(t, want, blocks[it], "iteration %d", it)
	}
	require.NoError(t, eng.Decide(ctx, run.ID, cp.ID, engine.Decision{Action: engine.Approve, DecidedBy: "ann"}), "at iteration 5 nothing blocks")
}
