package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/report/wfgraph"
	"quarry/internal/views"
)

// Workflows lists and draws the workflows: those registered in Go and the
// definition files of the workflows directory.
type Workflows struct {
	people   *people
	registry *engine.Registry
	// dir is QUARRY_WORKFLOWS_DIR ("" for none), read on every listing so
	// an edited file shows at once; opts check its files.
	dir    string
	opts   def.Options
	graphs *wfgraph.Renderer
	// startable are the files registered at start (Deps.StartableFiles).
	startable map[string]string
	// templates are the built-in templates by name (Deps.Templates).
	templates map[string]*def.Definition
	// engine, runs and done start runs of them (Start).
	engine *engine.Engine
	runs   RunStore
	done   <-chan struct{}
	// triggers keeps the workflows' trigger state and firings (nil: none
	// shown).
	triggers TriggerStore
	// auth lists the projects the start forms offer.
	auth *authenticator
}

// List handles GET /workflows: every registered workflow, then every
// definition file of the workflows directory. A workflow (or a file that
// loads) is drawn by wfgraph as SVG, and listed as stages, transitions and
// Mermaid source; a file that does not load is listed with every problem
// (file:line:col) and cannot start runs. A directory that cannot be read
// is reported on the page, which still lists the registered workflows.
func (h *Workflows) List(c echo.Context) error {
	d := h.data(c)
	if err := h.offerProjects(c, &d, ""); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.WorkflowsPage(d))
}

// offerProjects gives every start form of d the projects the person may
// start runs in, chosen preselected.
func (h *Workflows) offerProjects(c echo.Context, d *views.WorkflowsData, chosen string) error {
	if h.auth == nil {
		return nil
	}
	projects, err := h.auth.startProjects(c)
	if err != nil {
		return err
	}
	for i := range d.Workflows {
		if st := d.Workflows[i].Start; st != nil {
			st.Projects, st.Project = projects, chosen
		}
	}
	for i := range d.Files {
		if st := d.Files[i].Start; st != nil {
			st.Projects, st.Project = projects, chosen
		}
	}
	return nil
}

// builtins are the registered workflows that no definition file of the
// directory registered: each file is listed as a file.
func (h *Workflows) builtins() []*engine.Workflow {
	var out []*engine.Workflow
	for _, w := range h.registry.List() {
		if _, file := h.startable[w.Name]; !file {
			out = append(out, w)
		}
	}
	return out
}

// files reads the workflows directory as it is now (an edited file shows
// at once), with why it could not be read ("" when it could).
func (h *Workflows) files() ([]def.Loaded, string) {
	files, err := def.LoadFS(os.DirFS(h.dir), h.opts)
	if err != nil {
		return files, err.Error()
	}
	return files, ""
}

// data is the workflows page as it stands.
func (h *Workflows) data(c echo.Context) views.WorkflowsData {
	ctx := c.Request().Context()
	d := views.WorkflowsData{Page: h.people.page(c), Dir: h.dir}
	for i, w := range h.builtins() {
		if t := h.templates[w.Name]; t != nil {
			v := h.view(ctx, fmt.Sprintf("wf%d", i), wfgraph.FromDefinition(t), t.Metadata.Description)
			v.Start = startFormOf(t)
			d.Workflows = append(d.Workflows, v)
			continue
		}
		d.Workflows = append(d.Workflows, h.view(ctx, fmt.Sprintf("wf%d", i), wfgraph.FromWorkflow(w), w.Description))
	}
	if h.dir != "" {
		var files []def.Loaded
		files, d.DirError = h.files()
		for i, f := range files {
			fv := views.WorkflowFile{File: f.File}
			if f.Def != nil {
				fv.Name = f.Def.Metadata.Name
			}
			if f.Err == nil {
				wv := h.view(ctx, fmt.Sprintf("wff%d", i), wfgraph.FromDefinition(f.Def), f.Def.Metadata.Description)
				fv.Workflow = &wv
				switch hash, ok := h.startable[f.Def.Metadata.Name]; {
				case ok && hash == f.Def.Hash:
					fv.Start = startFormOf(f.Def)
				case ok:
					fv.NotStartable = "the file changed since the server started; it starts runs after a restart"
				default:
					fv.NotStartable = "this server cannot run it (its skill or parallel stages cannot run here yet, or its name is taken; see the server's log)"
				}
			} else {
				fv.Errors = problemLines(f.Err)
			}
			d.Files = append(d.Files, fv)
		}
	}
	return d
}

// templatesByName indexes the built-in templates by workflow name.
func templatesByName(tpls []*def.Definition) map[string]*def.Definition {
	out := make(map[string]*def.Definition, len(tpls))
	for _, t := range tpls {
		out[t.Metadata.Name] = t
	}
	return out
}

// startFormOf is a workflow file's start form, each field showing its
// parameter's default.
func startFormOf(d *def.Definition) *views.WorkflowStartForm {
	f := &views.WorkflowStartForm{Name: d.Metadata.Name, Title: d.Metadata.Title}
	if f.Title == "" {
		f.Title = d.Metadata.Name
	}
	for _, p := range d.Params {
		sp := views.StartParam{Name: p.Name, Type: string(p.Type), Description: p.Description, Required: p.Required}
		switch v := p.Default.(type) {
		case nil:
		case []string:
			sp.Value = strings.Join(v, "\n")
		default:
			sp.Value = fmt.Sprint(v)
		}
		f.Params = append(f.Params, sp)
	}
	return f
}

// view draws one workflow; id makes its SVG's element ids unique on the
// page. A drawing that fails leaves the rest of the page standing.
func (h *Workflows) view(ctx context.Context, id string, g wfgraph.Graph, description string) views.WorkflowView {
	o := wfgraph.Options{ID: id}
	v := views.WorkflowView{Name: g.Name, Title: g.Title, Description: description, Mermaid: wfgraph.Mermaid(g, o)}
	if err := h.triggerViews(ctx, &v); err != nil {
		v.TriggerError = err.Error()
	}
	svg, err := h.graphs.SVG(ctx, g, o)
	if err != nil {
		v.DrawError = err.Error()
	}
	v.SVG = svg
	for _, n := range g.Nodes {
		if n.Kind == wfgraph.KindStart || n.Kind == wfgraph.KindJoin {
			continue
		}
		v.Steps = append(v.Steps, views.WorkflowStep{ID: n.ID, Label: n.Label, Detail: n.Detail})
	}
	for _, e := range g.Edges {
		if e.From == wfgraph.Start {
			continue
		}
		label := e.Label
		if e.Limit != "" {
			label = strings.TrimSpace(label + " (max_iterations: " + e.Limit + ")")
		}
		to := e.To
		if to == wfgraph.End {
			to = def.Complete
		}
		v.Edges = append(v.Edges, views.WorkflowEdge{From: e.From, To: to, Label: label, Back: e.Back})
	}
	return v
}

// problemLines is each problem of a file that did not load, as
// file:line:col: message.
func problemLines(err error) []string {
	var errs def.Errors
	if !errors.As(err, &errs) {
		return []string{err.Error()}
	}
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
