package views_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

// loopFlow is a small workflow with a checkpoint, a loop, two outcomes to
// one step and titles carrying markup.
func loopFlow() views.WorkflowView {
	return views.WorkflowView{
		Name: "loop", Title: `Loop <b>"bold"</b>`,
		Steps: []views.WorkflowStep{
			{ID: "start", Title: "Start <script>alert(1)</script>", Entry: true},
			{ID: "check", Title: "Check the work & decide", Gate: "result_review"},
			{ID: "_end", Title: "end"},
		},
		Edges: []views.WorkflowEdge{
			{From: "start", To: "check", Outcome: "ok"},
			{From: "check", To: "_end", Outcome: "ok"},
			{From: "check", To: "_end", Outcome: "exit"},
			{From: "check", To: "start", Outcome: "iterate"},
		},
	}
}

func TestNewDiagram(t *testing.T) {
	t.Parallel()
	d := views.NewDiagram("wf0", loopFlow())
	require.Len(t, d.Nodes, 3)
	kinds := map[string]string{}
	for _, n := range d.Nodes {
		kinds[n.ID] = n.Kind
		require.Positive(t, n.W)
		require.NotEmpty(t, n.Lines)
	}
	require.Equal(t, map[string]string{"start": "step", "check": "checkpoint", "_end": "end"}, kinds)
	require.NotEmpty(t, d.Nodes[1].Polygon, "a checkpoint is a hexagon")
	require.Equal(t, "checkpoint", d.Nodes[1].Lines[len(d.Nodes[1].Lines)-1].Text)
	require.True(t, d.HasStart)

	// Two outcomes to one step are one arrow; a step's only "ok" needs no
	// label; the loop is a back edge.
	require.Len(t, d.Edges, 3)
	byPair := map[string]views.DiagramEdge{}
	for _, e := range d.Edges {
		byPair[e.From+">"+e.To] = e
	}
	require.Equal(t, "", byPair["start>check"].Label)
	require.Equal(t, "ok", byPair["start>check"].Outcomes)
	require.Equal(t, "ok, exit", byPair["check>_end"].Label)
	require.True(t, byPair["check>start"].Back)
	require.Equal(t, "iterate", byPair["check>start"].Label)

	require.Equal(t, d, views.NewDiagram("wf0", loopFlow()), "deterministic")
}

func TestWorkflowsPageDiagram(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	data := views.WorkflowsData{Workflows: []views.WorkflowView{loopFlow(), loopFlow()}}
	require.NoError(t, views.WorkflowsPage(data).Render(context.Background(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)

	svgs := doc.Find(`svg[data-testid="workflow-diagram"]`)
	require.Equal(t, 2, svgs.Length())
	svg := svgs.First()
	require.Equal(t, "img", svg.AttrOr("role", ""))
	require.Contains(t, svg.AttrOr("aria-label", ""), `Loop <b>"bold"</b>`, "the name is the title as text")
	require.Contains(t, svg.Find("title").First().Text(), "2 steps, 1 of them checkpoints")
	require.Zero(t, doc.Find("main script, main b").Length(), "titles are escaped")
	lines := svg.Find(`[data-node="start"] text`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	require.Equal(t, []string{"Start", "<script>alert(1)</script>"}, lines, "the long title wraps, as text")
	require.Equal(t, "checkpoint", svg.Find(`[data-node="check"]`).AttrOr("data-kind", ""))
	require.Equal(t, 1, svg.Find(`[data-node="check"] polygon`).Length())

	// Marker ids are unique on the page, and each diagram uses its own.
	ids := map[string]bool{}
	doc.Find("marker").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		require.False(t, ids[id], "duplicate id %s", id)
		ids[id] = true
	})
	require.Len(t, ids, 4)
	require.Equal(t, "url(#wf1-arrow)", svgs.Last().Find(`path[data-from="start"]`).AttrOr("marker-end", ""))

	// The text lists stay as the accessible fallback.
	require.Equal(t, 3, doc.Find(`[data-testid="workflow-steps"]`).First().Find("li").Length())
}
