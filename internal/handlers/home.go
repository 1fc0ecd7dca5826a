package handlers

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
	"quarry/internal/views"
)

// SearchWorkflow is the workflow the start form runs.
const SearchWorkflow = "search"

// Run parameters of the search workflow that the start form fills.
const (
	paramQuestion           = "question"
	paramMaxIterations      = "max_iterations"
	paramStrategyCheckpoint = "strategy_checkpoint"
	paramSources            = "sources"
)

// Home serves the landing page and starts runs from its form.
type Home struct {
	people *people
	runs   RunStore
	engine *engine.Engine
	auth   *authenticator
}

// searchParams returns the search workflow's declared parameters by name,
// or false when no search workflow is registered.
func searchParams(e *engine.Engine) (map[string]engine.Param, bool) {
	wf, err := e.Registry().Get(SearchWorkflow)
	if err != nil {
		return nil, false
	}
	decl, err := wf.Params()
	if err != nil {
		return nil, false
	}
	out := make(map[string]engine.Param, len(decl))
	for _, p := range decl {
		out[p.Name] = p
	}
	return out, true
}

// emptyForm is the start form with the workflow's defaults filled in.
func emptyForm(e *engine.Engine) views.StartForm {
	params, ok := searchParams(e)
	f := views.StartForm{Available: ok, ConfirmStrategy: true}
	if !ok {
		return f
	}
	if p, ok := params[paramMaxIterations]; ok {
		if p.Default != nil {
			f.MaxIterations = strconv.Itoa(engine.Params{"v": p.Default}.Int("v"))
		}
		if p.Max != nil {
			f.IterationsMax = strconv.Itoa(int(*p.Max))
		}
	}
	if p, ok := params[paramStrategyCheckpoint]; ok && p.Default != nil {
		f.ConfirmStrategy = engine.Params{"v": p.Default}.Bool("v")
	}
	if p, ok := params[paramSources]; ok {
		def := engine.Params{"v": p.Default}.Strings("v")
		for _, ch := range p.Choices {
			f.Sources = append(f.Sources, views.Choice{Value: ch, Checked: len(def) == 0 || slices.Contains(def, ch)})
		}
	}
	return f
}

// Show handles GET /: the start form and this browser's runs.
func (h *Home) Show(c echo.Context) error {
	return h.renderHome(c, http.StatusOK, emptyForm(h.engine))
}

func (h *Home) renderHome(c echo.Context, status int, f views.StartForm) error {
	projects, err := h.auth.startProjects(c)
	if err != nil {
		return err
	}
	f.Projects = projects
	d := views.HomeData{Page: h.people.page(c), Form: f}
	if id := identityOf(c); id.signedIn() {
		// An account's runs are its projects' (the newest of them).
		projects, err := h.auth.visibleProjects(c)
		if err != nil {
			return err
		}
		list, err := h.runs.ListRuns(c.Request().Context(), store.RunFilter{TextParam: paramQuestion, Limit: homeRuns, Projects: projects})
		if err != nil {
			return err
		}
		for _, r := range list.Runs {
			d.Runs = append(d.Runs, views.RunSummary{ID: r.ID, Question: r.Text, Status: string(r.Status), Iteration: r.Iteration, CreatedAt: r.CreatedAt})
		}
		return render(c, status, views.Home(d))
	}
	runs, err := h.runs.Runs(c.Request().Context(), h.people.runs(c))
	if err != nil {
		return err
	}
	for _, r := range runs {
		d.Runs = append(d.Runs, views.RunSummary{
			ID: r.ID, Question: r.Params.String(paramQuestion), Status: string(r.Status), Iteration: r.Iteration, CreatedAt: r.CreatedAt,
		})
	}
	return render(c, status, views.Home(d))
}

// homeRuns is how many of their projects' runs the home page lists.
const homeRuns = 20

// startInput is what a start request asks for, from the form or JSON.
type startInput struct {
	Question           string   `json:"question"`
	MaxIterations      *int     `json:"max_iterations"`
	StrategyCheckpoint *bool    `json:"strategy_checkpoint"`
	Sources            []string `json:"sources"`
	// StartedBy is who started the run: the form's signed-in name, or what
	// an API client says.
	StartedBy string `json:"started_by"`
	// Clarify asks clarifying questions first when the question is
	// ambiguous; QualityGate holds approval back for the strategy
	// review's blocking findings (both off when not given).
	Clarify     *bool `json:"clarify"`
	QualityGate *bool `json:"quality_gate"`
	// Screeners is how many people screen each paper independently, and
	// Conflicts who resolves their disagreements (pipeline.ParamScreeners,
	// ParamConflicts; the workflow's defaults when not given).
	Screeners *int   `json:"screeners"`
	Conflicts string `json:"conflicts"`
	// Library is how much of the local library the run searches: "all"
	// (the default) or "project", its project's library selection
	// (pipeline.ParamLibrary).
	Library string `json:"library"`
	// Project is the project the run belongs to (the route's, never the
	// body's).
	Project string `json:"-"`
}

// start validates the question (3–2,000 characters) and the workflow's
// parameters, and starts a search run. Every problem is reported at once,
// added to fe (the caller's own, e.g. a form value that is not a number;
// may be nil), keyed by parameter name for the form and the API alike, so
// a person fixes everything in one go rather than one error per attempt.
func start(ctx context.Context, e *engine.Engine, in startInput, fe fault.FieldErrors) (engine.Run, error) {
	if fe == nil {
		fe = fault.FieldErrors{}
	}
	q := strings.TrimSpace(in.Question)
	if n := utf8.RuneCountInString(q); n < 3 || n > 2000 {
		fe.Add(paramQuestion, "the question must be 3 to 2,000 characters long")
	}
	params, ok := searchParams(e)
	if !ok {
		return engine.Run{}, fault.Errorf(fault.ENotFound, "no search workflow is configured on this server")
	}
	input := map[string]any{paramQuestion: q}
	if _, ok := params[paramMaxIterations]; ok && in.MaxIterations != nil {
		input[paramMaxIterations] = *in.MaxIterations
	}
	if _, ok := params[paramStrategyCheckpoint]; ok && in.StrategyCheckpoint != nil {
		input[paramStrategyCheckpoint] = *in.StrategyCheckpoint
	}
	if _, ok := params[paramSources]; ok && in.Sources != nil {
		input[paramSources] = in.Sources
	}
	if _, ok := params[pipeline.ParamClarify]; ok && in.Clarify != nil {
		input[pipeline.ParamClarify] = *in.Clarify
	}
	if _, ok := params[pipeline.ParamQualityGate]; ok && in.QualityGate != nil {
		input[pipeline.ParamQualityGate] = *in.QualityGate
	}
	if _, ok := params[pipeline.ParamScreeners]; ok && in.Screeners != nil {
		input[pipeline.ParamScreeners] = *in.Screeners
	}
	if _, ok := params[pipeline.ParamConflicts]; ok && in.Conflicts != "" {
		input[pipeline.ParamConflicts] = in.Conflicts
	}
	if _, ok := params[pipeline.ParamLibrary]; ok && in.Library != "" {
		input[pipeline.ParamLibrary] = in.Library
		if in.Library == research.LibraryProject && in.Project == "" {
			fe.Add(pipeline.ParamLibrary, "a run of no project has no library selection to search; search the whole library")
		}
	}
	if _, ok := params[pipeline.ParamStartedBy]; ok && strings.TrimSpace(in.StartedBy) != "" {
		input[pipeline.ParamStartedBy] = strings.TrimSpace(in.StartedBy)
	}
	if len(fe) > 0 {
		// Start would stop at the first problem; check the parameters
		// here so their errors join the ones already found.
		if err := checkParams(e, input); err != nil {
			fields := fault.ErrorFields(err)
			if len(fields) == 0 {
				return engine.Run{}, err
			}
			for k, v := range fields {
				fe.Add(k, v)
			}
		}
		return engine.Run{}, fe.Err("invalid run")
	}
	return e.StartAs(ctx, engine.Starter{Project: in.Project, By: strings.TrimSpace(in.StartedBy)}, SearchWorkflow, input)
}

// checkParams validates input against the search workflow's declared
// parameters without starting anything.
func checkParams(e *engine.Engine, input map[string]any) error {
	wf, err := e.Registry().Get(SearchWorkflow)
	if err != nil {
		return err
	}
	_, err = wf.ResolveParams(input)
	return err
}

// Start handles POST /runs: it starts a run and redirects to its page;
// invalid input re-renders the form with the values kept (422).
func (h *Home) Start(c echo.Context) error {
	f, chosen, err := h.submitted(c)
	if err != nil {
		return err
	}
	in := startInput{Question: f.Question, StrategyCheckpoint: &f.ConfirmStrategy, Sources: chosen, StartedBy: h.people.name(c), Project: projectOf(c),
		Clarify: &f.Clarify, QualityGate: &f.QualityGate}
	if f.SelectionOnly {
		in.Library = research.LibraryProject
	}
	if f.DualScreening {
		two := 2
		in.Screeners, in.Conflicts = &two, research.ResolveByThird
	}
	if in.Sources == nil {
		in.Sources = []string{}
	}
	fe := fault.FieldErrors{}
	if s := strings.TrimSpace(f.MaxIterations); s != "" {
		if n, err := strconv.Atoi(s); err != nil {
			fe.Add(paramMaxIterations, "must be a whole number")
		} else {
			in.MaxIterations = &n
		}
	}
	run, err := start(c.Request().Context(), h.engine, in, fe)
	if fault.ErrorCode(err) == fault.EInvalid {
		f.Errors = map[string]string{}
		fields := fault.ErrorFields(err)
		for _, k := range slices.Sorted(maps.Keys(fields)) { // sorted: the first error of a group wins, every time
			if _, seen := f.Errors[fieldRoot(k)]; !seen {
				f.Errors[fieldRoot(k)] = fields[k]
			}
		}
		return h.renderHome(c, http.StatusUnprocessableEntity, f)
	}
	if err != nil {
		return err
	}
	if err := h.people.remember(c, run.ID); err != nil {
		return err
	}
	settle(c.Request().Context(), h.engine, h.runs, run.ID, nil)
	return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
}

// StartAgain handles POST /runs when the form's CSRF token failed (it
// expired, or was missing): the home page again, with the person's values
// and the reason above the form, and a fresh token, so submitting again
// works and nothing typed is lost. Nothing is started. The status is the
// unauthorized code's (403), as for any refused token.
func (h *Home) StartAgain(c echo.Context, ce *csrfError) error {
	f, _, err := h.submitted(c)
	if err != nil {
		return err
	}
	f.Errors = map[string]string{"form": ce.retryMessage("the run was not started")}
	return h.renderHome(c, StatusForCode(fault.EUnauthorized), f)
}

// submitted is the start form as posted, with the sources ticked.
func (h *Home) submitted(c echo.Context) (views.StartForm, []string, error) {
	form, err := c.FormParams()
	if err != nil {
		return views.StartForm{}, nil, fault.Errorf(fault.EInvalid, "unreadable form: %v", err)
	}
	f := emptyForm(h.engine)
	f.Question = form.Get(paramQuestion)
	f.MaxIterations = form.Get(paramMaxIterations)
	f.ConfirmStrategy = form.Get(paramStrategyCheckpoint) == "true"
	f.Clarify = form.Get(pipeline.ParamClarify) == "true"
	f.QualityGate = form.Get(pipeline.ParamQualityGate) == "true"
	f.DualScreening = form.Get("dual_screening") == "true"
	f.SelectionOnly = form.Get("selection_only") == "true"
	f.Project = form.Get("project")
	chosen := form[paramSources]
	for i := range f.Sources {
		f.Sources[i].Checked = slices.Contains(chosen, f.Sources[i].Value)
	}
	return f, chosen, nil
}

// fieldRoot maps "sources[2]" to "sources", so an error about one element
// shows next to the group of inputs.
func fieldRoot(key string) string {
	if i := strings.IndexAny(key, "[."); i > 0 {
		return key[:i]
	}
	return key
}
