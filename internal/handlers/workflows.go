package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/views"
)

// Workflows draws the registered workflows.
type Workflows struct {
	people   *people
	registry *engine.Registry
}

// List handles GET /workflows: every workflow's graph from Graph(), drawn
// as an SVG diagram (laid out by the view, see views.NewDiagram), as
// accessible lists of steps and transitions and as Mermaid source.
func (h *Workflows) List(c echo.Context) error {
	d := views.WorkflowsData{Page: h.people.page(c)}
	for _, w := range h.registry.List() {
		g := w.Graph()
		v := views.WorkflowView{Name: w.Name, Title: w.Title, Description: w.Description, Mermaid: g.Mermaid()}
		if v.Title == "" {
			v.Title = w.Name
		}
		for _, n := range g.Nodes {
			v.Steps = append(v.Steps, views.WorkflowStep{ID: n.ID, Title: n.Title, Gate: string(n.Gate), Entry: n.Entry})
		}
		for _, e := range g.Edges {
			v.Edges = append(v.Edges, views.WorkflowEdge{From: e.From, To: e.To, Outcome: e.Outcome})
		}
		d.Workflows = append(d.Workflows, v)
	}
	return render(c, http.StatusOK, views.WorkflowsPage(d))
}
