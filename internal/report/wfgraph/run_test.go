package wfgraph_test

import (
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/report/wfgraph"
)

// TestForRunNamedBranches: each named branch colours every stage of its
// cluster (b1 and b2 both running), the parallel stage keeps its own
// state and is current, and its join waits (pending) until the stage ends.
func TestForRunNamedBranches(t *testing.T) {
	t.Parallel()
	g := demo(t)
	stages := []engine.StageState{
		{ID: "prepare", Type: "skill", State: engine.StageCompleted},
		{ID: "fan", Type: "parallel", State: engine.StageWaiting, Branches: []engine.BranchState{
			{ID: "a", State: "completed"}, {ID: "b1", State: "running"},
		}},
		{ID: "decide", Type: "gate", State: engine.StagePending},
	}
	o := wfgraph.ForRun(g, stages, "fan")
	require.Equal(t, "fan", o.Current)
	require.Equal(t, map[string]wfgraph.State{
		"prepare": wfgraph.Completed, "fan": wfgraph.Waiting, "decide": wfgraph.Pending,
		"a": wfgraph.Completed, "b1": wfgraph.Running, "b2": wfgraph.Running, "fan.join": wfgraph.Pending,
	}, o.States)
	require.Empty(t, o.Notes, "a named branch needs no count")

	stages[1].State = engine.StageCompleted
	stages[1].Branches[1].State = "completed"
	o = wfgraph.ForRun(g, stages, "decide")
	require.Equal(t, wfgraph.Completed, o.States["fan.join"])
	require.Equal(t, wfgraph.Completed, o.States["b2"])

	// In a later iteration, before the stage runs again, the branches an
	// earlier visit left are not shown as this iteration's.
	stages[1].State = engine.StagePending
	o = wfgraph.ForRun(g, stages, "prepare")
	for _, id := range []string{"a", "b1", "b2", "fan.join"} {
		require.Equal(t, wfgraph.Pending, o.States[id], id)
	}
}

// TestForRunForEach: a for_each branch's items fold into one state on its
// stages, and its cluster's label counts them, in the drawing too.
func TestForRunForEach(t *testing.T) {
	t.Parallel()
	g := livingReview(t)
	items := func(states ...string) []engine.BranchState {
		var out []engine.BranchState
		for i, st := range states {
			out = append(out, engine.BranchState{ID: "source-" + string(rune('1'+i)), State: st})
		}
		return out
	}
	for _, c := range []struct {
		stage string
		items []string
		want  wfgraph.State
		note  string
	}{
		{engine.StageRunning, []string{"completed", "running", "failed"}, wfgraph.Running, "1 of 3 done, 1 failed"},
		{engine.StageRunning, []string{"completed", "pending"}, wfgraph.Pending, "1 of 2 done"},
		{engine.StageFailed, []string{"failed", "canceled"}, wfgraph.Failed, "0 of 2 done, 1 failed, 1 canceled"},
		{engine.StageCompleted, []string{"completed", "canceled", "skipped"}, wfgraph.Completed, "1 of 3 done, 1 canceled, 1 skipped"},
		{engine.StageCompleted, []string{"skipped", "skipped"}, wfgraph.Skipped, "0 of 2 done, 2 skipped"},
		{engine.StageCompleted, nil, wfgraph.Skipped, ""},
		{engine.StageRunning, nil, wfgraph.Pending, ""},
		{engine.StageSkipped, []string{"completed"}, wfgraph.Skipped, ""},
	} {
		stages := []engine.StageState{{ID: "search", Type: "parallel", State: c.stage, Branches: items(c.items...)}}
		o := wfgraph.ForRun(g, stages, "search")
		require.Equal(t, c.want, o.States["fetch"], "%s %v", c.stage, c.items)
		require.Equal(t, c.note, o.Notes["search.source"], "%s %v", c.stage, c.items)
	}

	stages := []engine.StageState{{ID: "search", Type: "parallel", State: engine.StageRunning, Branches: items("completed", "running")}}
	o := wfgraph.ForRun(g, stages, "search")
	o.ID = "lr"
	svg, err := wfgraph.NewRenderer().SVG(context.Background(), g, o)
	require.NoError(t, err)
	doc := svgDoc(t, svg)
	require.Equal(t, "running", doc.Find(`[data-node="fetch"]`).AttrOr("data-state", ""))
	require.Equal(t, "true", doc.Find(`[data-node="search"]`).AttrOr("data-current", ""))
	require.Equal(t, "pending", doc.Find(`[data-node="search.join"]`).AttrOr("data-state", ""))
	var texts []string
	doc.Find("text").Each(func(_ int, s *goquery.Selection) { texts = append(texts, s.Text()) })
	require.Contains(t, texts, "1 of 2 done")
}

// TestForRunGoWorkflow: a Go workflow's drawing has no branches; its
// stages take their states.
func TestForRunGoWorkflow(t *testing.T) {
	t.Parallel()
	w := &engine.Workflow{Name: "w", Entry: "work", Steps: []engine.StepDef{
		{ID: "work", Next: engine.Next{engine.OK: engine.End}},
	}}
	o := wfgraph.ForRun(wfgraph.FromWorkflow(w), []engine.StageState{{ID: "work", Type: "skill", State: engine.StageRunning}}, "work")
	require.Equal(t, map[string]wfgraph.State{"work": wfgraph.Running}, o.States)
}
