package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// WorkflowsJSON is GET /api/workflows: every workflow the server knows,
// as the /workflows page lists them.
type WorkflowsJSON struct {
	Workflows []WorkflowJSON `json:"workflows"`
	// DirError says why the workflows directory could not be read.
	DirError string `json:"dir_error,omitempty"`
}

// WorkflowJSON is one workflow: registered in Go ("builtin") or a
// definition file of QUARRY_WORKFLOWS_DIR ("file").
type WorkflowJSON struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
	// File, Version and Hash name a definition file's exact text.
	File    string `json:"file,omitempty"`
	Version int    `json:"version,omitempty"`
	Hash    string `json:"hash,omitempty"`
	// Valid is false for a file with problems, each in Errors.
	Valid  bool                  `json:"valid"`
	Errors []DefinitionErrorJSON `json:"errors,omitempty"`
	// CanStart says whether POST /api/runs starts this workflow: a
	// definition file registered when the server started, unchanged since
	// (an edited file runs after a restart).
	CanStart bool        `json:"can_start"`
	Params   []ParamJSON `json:"params"`
	// Triggers start runs of a registered workflow on a schedule or from
	// an inbound webhook; Firings are their last firings, newest first.
	Triggers []TriggerJSON   `json:"triggers,omitempty"`
	Firings  []engine.Firing `json:"firings,omitempty"`
}

// DefinitionErrorJSON is one problem of a definition file.
type DefinitionErrorJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Stage   string `json:"stage,omitempty"`
	Message string `json:"message"`
}

// ParamJSON is one declared run parameter: enough to draw and check a
// form.
type ParamJSON struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
}

// API handles GET /api/workflows.
func (h *Workflows) API(c echo.Context) error {
	out, err := h.list(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// APIOne handles GET /api/workflows/:name: one workflow as GET
// /api/workflows lists it, with its triggers and recent firings (the
// registered one, when a file in the directory repeats its name).
func (h *Workflows) APIOne(c echo.Context) error {
	out, err := h.list(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	var found *WorkflowJSON
	for i, w := range out.Workflows {
		if w.Name == name && (found == nil || w.CanStart && !found.CanStart) {
			found = &out.Workflows[i]
		}
	}
	if found == nil {
		return fault.Errorf(fault.ENotFound, "no workflow %q", name)
	}
	return c.JSON(http.StatusOK, found)
}

func (h *Workflows) list(c echo.Context) (WorkflowsJSON, error) {
	out := WorkflowsJSON{Workflows: []WorkflowJSON{}}
	for _, w := range h.builtins() {
		decl, err := w.Params()
		if err != nil {
			return out, err
		}
		j := WorkflowJSON{Name: w.Name, Title: w.Title, Description: w.Description,
			Source: "builtin", Valid: true, CanStart: true, Params: engineParams(decl)}
		if j.Triggers, j.Firings, err = h.triggersJSON(c.Request().Context(), w.Name); err != nil {
			return out, err
		}
		out.Workflows = append(out.Workflows, j)
	}
	if h.dir != "" {
		var files []def.Loaded
		files, out.DirError = h.files()
		for _, f := range files {
			w := fileJSON(f)
			w.CanStart = w.Valid && w.Hash != "" && h.startable[w.Name] == w.Hash
			if h.startable[w.Name] != "" {
				var err error
				if w.Triggers, w.Firings, err = h.triggersJSON(c.Request().Context(), w.Name); err != nil {
					return out, err
				}
			}
			out.Workflows = append(out.Workflows, w)
		}
	}
	return out, nil
}

func fileJSON(f def.Loaded) WorkflowJSON {
	w := WorkflowJSON{Source: "file", File: f.File, Valid: f.Err == nil, Params: []ParamJSON{}}
	if d := f.Def; d != nil {
		w.Name, w.Title, w.Description = d.Metadata.Name, d.Metadata.Title, d.Metadata.Description
		w.Version, w.Hash = d.Metadata.Version, d.Hash
		for _, p := range d.Params {
			w.Params = append(w.Params, ParamJSON{Name: p.Name, Type: string(p.Type), Required: p.Required, Default: p.Default,
				Min: p.Min, Max: p.Max, Enum: p.Enum, Description: p.Description})
		}
	}
	if f.Err != nil {
		var errs def.Errors
		if !errors.As(f.Err, &errs) {
			errs = def.Errors{{File: f.File, Line: 1, Col: 1, Msg: f.Err.Error()}}
		}
		for _, e := range errs {
			w.Errors = append(w.Errors, DefinitionErrorJSON{File: e.File, Line: e.Line, Col: e.Col, Stage: e.Stage, Message: e.Msg})
		}
	}
	return w
}

func engineParams(decl []engine.Param) []ParamJSON {
	out := make([]ParamJSON, 0, len(decl))
	for _, p := range decl {
		typ := string(p.Type)
		if p.Type == engine.ParamStrings {
			typ = string(def.ParamList) // the definition format's name
		}
		out = append(out, ParamJSON{Name: p.Name, Type: typ, Required: p.Required, Default: p.Default,
			Min: p.Min, Max: p.Max, Enum: p.Choices, Description: p.Description})
	}
	return out
}
