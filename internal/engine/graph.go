package engine

// Node is one step of a drawn workflow.
type Node struct {
	ID    string         `json:"id"`
	Title string         `json:"title"`
	Gate  CheckpointKind `json:"gate,omitempty"`
	Entry bool           `json:"entry,omitempty"`
}

// Edge is one transition. Outcome "exit" marks the path taken when the
// iteration bound is reached.
type Edge struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Outcome string `json:"outcome"`
}

// Graph is a workflow's transition graph as data, in definition order;
// internal/report/wfgraph draws it.
type Graph struct {
	Name  string `json:"name"`
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Graph returns the transition graph. End appears as a node when reached.
func (w *Workflow) Graph() Graph {
	g := Graph{Name: w.Name}
	hasEnd := false
	for _, s := range w.Steps {
		n := Node{ID: s.ID, Title: s.Title, Entry: s.ID == w.Entry}
		if n.Title == "" {
			n.Title = s.ID
		}
		if s.Gate != nil {
			n.Gate = s.Gate.Kind
		}
		g.Nodes = append(g.Nodes, n)
		// A run about to end goes through the on_complete hooks first.
		to := func(t string) string {
			if t == End && w.OnComplete != "" && s.ID != w.OnComplete {
				return w.OnComplete
			}
			return t
		}
		for _, o := range sortedOutcomes(s.Next) {
			g.Edges = append(g.Edges, Edge{From: s.ID, To: to(s.Next[o]), Outcome: string(o)})
			hasEnd = hasEnd || s.Next[o] == End
		}
		if s.Exit != "" {
			g.Edges = append(g.Edges, Edge{From: s.ID, To: to(s.Exit), Outcome: "exit"})
			hasEnd = hasEnd || s.Exit == End
		}
	}
	if hasEnd {
		g.Nodes = append(g.Nodes, Node{ID: End, Title: "end"})
	}
	return g
}
