package handlers_test

import (
	"net/http"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/handlers/testapp"
)

// TestWorkflowsPageDrawsGraph: /workflows draws the registered search
// workflow as an SVG image with one node per step of its graph (the end
// included), checkpoints drawn as such, and its loops as back edges.
func TestWorkflowsPageDrawsGraph(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	reg, err := testapp.Registry()
	require.NoError(t, err)
	wf, err := reg.Get("search")
	require.NoError(t, err)
	g := wf.Graph()

	res, doc := w.get(t, w.client, "/workflows")
	require.Equal(t, http.StatusOK, res.StatusCode)
	svg := doc.Find(`[data-testid="workflow"][data-workflow="search"] svg[data-testid="workflow-diagram"]`)
	require.Equal(t, 1, svg.Length())
	require.Equal(t, "img", svg.AttrOr("role", ""))
	require.NotEmpty(t, svg.AttrOr("aria-label", ""))
	require.Equal(t, 1, svg.ChildrenFiltered("title").Length())

	var want, got []string
	gates := map[string]bool{}
	for _, n := range g.Nodes {
		want = append(want, n.ID)
		gates[n.ID] = n.Gate != ""
	}
	svg.Find(`[data-testid="diagram-node"]`).Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("data-node", "")
		got = append(got, id)
		require.Equal(t, gates[id], s.AttrOr("data-kind", "") == "checkpoint", id)
		require.Equal(t, 1, s.Find("rect, polygon").Length(), id)
	})
	require.Equal(t, want, got)

	back := map[string]bool{}
	svg.Find(`path[data-back]`).Each(func(_ int, s *goquery.Selection) {
		back[s.AttrOr("data-from", "")+"→"+s.AttrOr("data-to", "")] = true
	})
	// The loops go back: iterating to build, and showing more (review →
	// more → review) back to the review.
	require.Equal(t, map[string]bool{"confirm_strategy→build": true, "review→build": true, "more→review": true}, back)
}
