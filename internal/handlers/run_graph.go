package handlers

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/report/wfgraph"
)

// GraphSVG handles GET /runs/:id/graph.svg: the run's workflow drawn with
// each stage coloured by its state in the current iteration, the current
// stage outlined, and a parallel stage's branches coloured by theirs
// (engine.Progress, as GET /api/runs/:id lists them; wfgraph.ForRun). A
// workflow compiled from a definition file is drawn from the text the run
// runs, so its parallel stages show their branches; one written in Go from
// its steps. The run page loads it as an image, so drawing it never holds
// the page back; its address carries the run's version, so a redrawn run
// is fetched anew and an unchanged one comes from the browser's cache.
func (h *Runs) GraphSVG(c echo.Context) error {
	ctx := c.Request().Context()
	e, err := h.cache.get(ctx, h.runs, c.Param("id"))
	if err != nil {
		return err
	}
	wf, err := h.engine.Workflow(ctx, e.run)
	if err != nil {
		return err
	}
	g := h.drawn.graph(wf)
	o := wfgraph.ForRun(g, e.stages, e.resume.Current)
	o.ID = "run"
	svg, err := h.graphs.SVG(ctx, g, o)
	if err != nil {
		return err
	}
	hdr := c.Response().Header()
	hdr.Set(echo.HeaderContentDisposition, mime.FormatMediaType("inline", map[string]string{"filename": "quarry-run-" + e.run.ID + "-workflow.svg"}))
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	hdr.Set(echo.HeaderCacheControl, "no-cache")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", []byte(svg))
}

// drawnSources keeps the graphs of the definition texts runs were drawn
// from, by the text's hash: a run page polls its drawing, and parsing the
// YAML again on every poll would be waste. The zero value is ready.
type drawnSources struct {
	mu     sync.Mutex
	byHash map[string]wfgraph.Graph
}

// maxDrawnSources bounds drawnSources: the texts runs were started from
// are a few versions of a few files.
const maxDrawnSources = 64

// graph is wf drawn from its definition text when it has one that loads,
// else from its steps.
func (d *drawnSources) graph(wf *engine.Workflow) wfgraph.Graph {
	src := wf.Source
	if src == nil {
		return wfgraph.FromWorkflow(wf)
	}
	d.mu.Lock()
	g, ok := d.byHash[src.Hash]
	d.mu.Unlock()
	if ok {
		return g
	}
	loaded, ok := loadSource(src)
	if !ok {
		return wfgraph.FromWorkflow(wf)
	}
	g = wfgraph.FromDefinition(loaded)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byHash == nil {
		d.byHash = map[string]wfgraph.Graph{}
	}
	if len(d.byHash) >= maxDrawnSources {
		for k := range d.byHash { // any one: map order is random
			delete(d.byHash, k)
			break
		}
	}
	d.byHash[src.Hash] = g
	return g
}

// loadSource loads the definition a workflow was compiled from, to draw
// it. The text compiled with the names this server registers (skills, the
// search's native steps and forms, webhook hosts), which the handlers do
// not know; so it is loaded once to read the names it uses and again with
// exactly those allowed: the second load checks all the rest. ok is false
// when it does not load even so (the workflow is drawn from its steps).
func loadSource(src *engine.Source) (*def.Definition, bool) {
	d, err := def.Load(src.File, []byte(src.Text), def.Options{})
	if err == nil {
		return d, true
	}
	if d == nil {
		return nil, false
	}
	d, err = def.Load(src.File, []byte(src.Text), namesUsed(d))
	return d, err == nil
}

// namesUsed are the definition options under which d's skills, forms and
// webhook hosts are all registered: each form's outcomes are the labels
// its gate routes (but skip, which every form may route).
func namesUsed(d *def.Definition) def.Options {
	o := def.Options{Forms: map[string][]string{}}
	var walk func(stages []*def.Stage)
	walk = func(stages []*def.Stage) {
		for _, s := range stages {
			if s.Skill != "" {
				o.Skills = append(o.Skills, s.Skill)
			}
			if s.Form != "" {
				for _, opt := range s.Options {
					if opt.Label != def.FormSkip {
						o.Forms[s.Form] = append(o.Forms[s.Form], opt.Label)
					}
				}
			}
			if r := s.Request; r != nil {
				if h := urlHost(r.URL); h != "" {
					o.WebhookHosts = append(o.WebhookHosts, h)
				}
			}
			for _, b := range s.Branches {
				walk(b.Stages)
			}
		}
	}
	walk(d.Stages)
	return o
}

// urlHost is the host (with its port, if any) of a webhook URL whose
// scheme and host are written out, as def checks it; "" for any other.
func urlHost(raw string) string {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	end := len(raw) - len(rest) + strings.IndexAny(rest+"/", "/?#")
	u, err := url.Parse(raw[:end])
	if err != nil {
		return ""
	}
	return u.Host
}
