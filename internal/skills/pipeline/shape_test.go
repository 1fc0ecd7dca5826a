package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/skills/pipeline"
)

// TestWorkflowShape pins the search workflow as the engine sees it: its
// steps, titles, transitions, exits, gates, retry policies, parameters
// (with the configured sources and defaults) and graph. It was written
// against the workflow built in Go, and holds for the one compiled from
// search.yaml, so the file changes nothing a run can observe.
func TestWorkflowShape(t *testing.T) {
	t.Parallel()
	sk, _ := fakeSkills(poolSource{"alpha"}, poolSource{"beta"})
	no := false
	wf, err := pipeline.New(sk, pipeline.Options{MaxIterations: 7, EnableStrategyCheckpoint: &no})
	require.NoError(t, err)

	require.Equal(t, pipeline.Name, wf.Name)
	require.Equal(t, "Literature search", wf.Title)
	require.Equal(t, "Parse the question, build and confirm a strategy, search the sources, "+
		"deduplicate, score and organise the papers, review them and refine until done.", wf.Description)
	require.Equal(t, pipeline.StepParse, wf.Entry)
	require.Equal(t, 7, wf.MaxIterations)

	type step struct {
		ID, Title string
		Gate      engine.CheckpointKind
		Next      engine.Next
		Exit      string
		Skippable bool
	}
	want := []step{
		{ID: "parse", Title: "Parse the question", Next: engine.Next{engine.OK: "clarify"}},
		{ID: "clarify", Title: "Clarify the question", Gate: pipeline.KindClarify,
			Next: engine.Next{engine.OK: "build", engine.Skip: "build"}, Skippable: true},
		{ID: "build", Title: "Build the search strategy", Next: engine.Next{engine.OK: "confirm_strategy"}},
		{ID: "confirm_strategy", Title: "Confirm the strategy", Gate: pipeline.KindStrategyConfirmation,
			Next: engine.Next{engine.OK: "search", engine.Skip: "search", engine.Iterate: "build"}, Exit: "finalize", Skippable: true},
		{ID: "search", Title: "Search the sources", Next: engine.Next{engine.OK: "dedup"}},
		{ID: "dedup", Title: "Remove duplicates", Next: engine.Next{engine.OK: "score"}},
		{ID: "score", Title: "Score relevance", Next: engine.Next{engine.OK: "organize"}},
		{ID: "organize", Title: "Organise into themes", Next: engine.Next{engine.OK: "review"}},
		{ID: "review", Title: "Review the results", Gate: pipeline.KindResultReview,
			Next: engine.Next{engine.OK: "finalize", engine.Iterate: "build", engine.More: "more"}, Exit: "finalize"},
		{ID: "more", Title: "Show more results", Next: engine.Next{engine.OK: "review"}},
		{ID: "finalize", Title: "Finalise the collection", Next: engine.Next{engine.OK: engine.End}},
	}
	got := make([]step, 0, len(wf.Steps))
	for _, s := range wf.Steps {
		g := step{ID: s.ID, Title: s.Title, Next: s.Next, Exit: s.Exit, Skippable: s.Skippable()}
		if s.Gate != nil {
			g.Gate = s.Gate.Kind
			require.Nil(t, s.Gate.Precheck, "step %s", s.ID)
			require.Contains(t, []engine.Outcome{"", engine.OK}, s.Gate.Auto, "step %s", s.ID)
			require.NotNil(t, s.Gate.Validate, "step %s", s.ID)
			require.Equal(t, s.ID == pipeline.StepConfirmStrategy || s.ID == pipeline.StepClarify, s.Gate.Enabled != nil, "step %s", s.ID)
		} else {
			require.NotNil(t, s.Handler, "step %s", s.ID)
		}
		require.Empty(t, s.Preconditions, "step %s", s.ID)
		require.Empty(t, s.Postconditions, "step %s", s.ID)
		// Every step is tried three times at once, then a person decides.
		attempts := s.Retry.MaxAttempts
		if attempts == 0 {
			attempts = 3
		}
		require.Equal(t, 3, attempts, "step %s", s.ID)
		require.Zero(t, s.Retry.Backoff, "step %s", s.ID)
		require.Zero(t, s.Retry.MaxBackoff, "step %s", s.ID)
		require.Empty(t, s.Retry.Then, "step %s", s.ID)
		got = append(got, g)
	}
	require.Equal(t, want, got)

	params, err := wf.Params()
	require.NoError(t, err)
	require.Equal(t, []engine.Param{
		{Name: "question", Description: "The research question, in your own words.",
			Type: engine.ParamString, Required: true, Min: engine.Bound(3), Max: engine.Bound(2000)},
		{Name: "started_by", Description: "Who started the run, for the search-strategy report.",
			Type: engine.ParamString, Default: "", Max: engine.Bound(200)},
		{Name: "sources", Description: "The sources to search.",
			Type: engine.ParamStrings, Choices: []string{"alpha", "beta"}, Default: []string{"alpha", "beta"}, Min: engine.Bound(1)},
		{Name: "strategy_checkpoint", Description: "Ask me to confirm each strategy before searching.",
			Type: engine.ParamBool, Default: false},
		{Name: "max_iterations", Description: "The most search iterations this run may take.",
			Type: engine.ParamInt, Default: 7, Min: engine.Bound(1), Max: engine.Bound(pipeline.MaxIterationsLimit)},
		{Name: "clarify", Description: "Ask me a few questions first when the question is ambiguous.",
			Type: engine.ParamBool, Default: false},
		{Name: "quality_gate", Description: "Refuse to approve a strategy with blocking review findings unless I say why.",
			Type: engine.ParamBool, Default: false},
		{Name: "library", Description: "Search all of the local library, or only the run's project's library selection.",
			Type: engine.ParamString, Default: "all", Choices: []string{"all", "project"}},
		{Name: "screeners", Description: "How many people screen each paper independently (2: blind dual screening).",
			Type: engine.ParamInt, Default: int64(1), Min: engine.Bound(1), Max: engine.Bound(5)},
		{Name: "conflicts", Description: "Who resolves a dual-screening disagreement: a third person, or either of the pair.",
			Type: engine.ParamString, Default: "third", Choices: []string{"third", "pair"}},
	}, params)

	g := wf.Graph()
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, e.From+" -"+e.Outcome+"-> "+e.To)
	}
	require.Equal(t, []string{
		"parse -ok-> clarify",
		"clarify -ok-> build", "clarify -skip-> build",
		"build -ok-> confirm_strategy",
		"confirm_strategy -iterate-> build", "confirm_strategy -ok-> search", "confirm_strategy -skip-> search",
		"confirm_strategy -exit-> finalize",
		"search -ok-> dedup",
		"dedup -ok-> score",
		"score -ok-> organize",
		"organize -ok-> review",
		"review -iterate-> build", "review -more-> more", "review -ok-> finalize", "review -exit-> finalize",
		"more -ok-> review",
		"finalize -ok-> _end",
	}, edges)
	require.Len(t, g.Nodes, len(want)+1)
	require.Equal(t, engine.Node{ID: "parse", Title: "Parse the question", Entry: true}, g.Nodes[0])
	require.Equal(t, engine.Node{ID: engine.End, Title: "end"}, g.Nodes[len(want)])

	// The defaults: five iterations, the strategy confirmed.
	wf, err = pipeline.New(sk, pipeline.Options{})
	require.NoError(t, err)
	require.Equal(t, pipeline.DefaultMaxIterations, wf.MaxIterations)
	params, err = wf.Params()
	require.NoError(t, err)
	require.Equal(t, true, params[3].Default)
	require.Equal(t, pipeline.DefaultMaxIterations, params[4].Default)
}

// TestSearchFileUsesEveryRegisteredName: the embedded file loads, and
// each native step and form the package registers is one the file calls.
func TestSearchFileUsesEveryRegisteredName(t *testing.T) {
	t.Parallel()
	d, err := pipeline.Definition()
	require.NoError(t, err)
	used := map[string]bool{}
	for _, s := range d.Stages {
		used[s.Skill], used[s.Form] = true, true
	}
	o := pipeline.DefOptions(def.Options{})
	require.Len(t, o.Skills, 8)
	for _, n := range o.Skills {
		require.True(t, used[n], "native %s", n)
	}
	require.Len(t, o.Forms, 3)
	for n := range o.Forms {
		require.True(t, used[n], "form %s", n)
	}
}
