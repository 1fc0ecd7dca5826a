package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/views"
)

// Start handles POST /workflows/:name/runs: a run of a workflow file or
// a built-in template from its start form, each field read by its parameter's type (a list is one
// item a line; an empty field takes the default). Every bad field is
// shown at once on the workflows page, the values kept (422); a started
// run's page comes next.
func (h *Workflows) Start(c echo.Context) error {
	name := c.Param("name")
	if _, ok := h.startable[name]; !ok && h.templates[name] == nil {
		return fault.Errorf(fault.ENotFound, "no workflow file %q can start runs on this server", name)
	}
	wf, err := h.registry.Get(name)
	if err != nil {
		return err
	}
	decl, err := wf.Params()
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return fault.Errorf(fault.EInvalid, "unreadable form: %v", err)
	}
	input := map[string]any{}
	fe := fault.FieldErrors{}
	for _, p := range decl {
		raw := strings.TrimSpace(form.Get(p.Name))
		switch p.Type {
		case engine.ParamBool:
			input[p.Name] = raw == "true"
		case engine.ParamStrings:
			var items []string
			for _, l := range strings.Split(raw, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					items = append(items, l)
				}
			}
			if items != nil {
				input[p.Name] = items
			}
		case engine.ParamInt:
			if raw == "" {
				continue
			}
			n, err := strconv.Atoi(raw)
			if err != nil {
				fe.Add(p.Name, "is not a whole number")
				continue
			}
			input[p.Name] = n
		case engine.ParamFloat:
			if raw == "" {
				continue
			}
			x, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				fe.Add(p.Name, "is not a number")
				continue
			}
			input[p.Name] = x
		default:
			if raw != "" {
				input[p.Name] = raw
			}
		}
	}
	if len(fe) > 0 {
		// Start would not be reached: check the other fields too, so
		// every problem shows at once.
		if _, err := wf.ResolveParams(input); err != nil {
			for k, v := range fault.ErrorFields(err) {
				fe.Add(k, v)
			}
		}
	} else {
		var run engine.Run
		run, err = h.engine.StartAs(c.Request().Context(), engine.Starter{Project: projectOf(c), By: h.people.name(c)}, name, input)
		if err == nil {
			settle(c.Request().Context(), h.engine, h.runs, run.ID, h.done)
			return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
		}
		fields := fault.ErrorFields(err)
		if len(fields) == 0 {
			return err
		}
		for k, v := range fields {
			fe.Add(k, v)
		}
	}
	d := h.data(c)
	if err := h.offerProjects(c, &d, form.Get("project")); err != nil {
		return err
	}
	forms := make([]*views.WorkflowStartForm, 0, len(d.Files)+len(d.Workflows))
	for i := range d.Workflows {
		forms = append(forms, d.Workflows[i].Start)
	}
	for i := range d.Files {
		forms = append(forms, d.Files[i].Start)
	}
	for _, st := range forms {
		if st != nil && st.Name == name {
			st.Error = "The run was not started: fix the fields marked below."
			for j := range st.Params {
				st.Params[j].Value = form.Get(st.Params[j].Name)
				st.Params[j].Error = fe[st.Params[j].Name]
			}
		}
	}
	return render(c, http.StatusUnprocessableEntity, views.WorkflowsPage(d))
}
