package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/runview"
	"quarry/internal/skills/pipeline"
)

// API is the JSON API for scripts and tests. It speaks snake_case and the
// same error codes as the pages, through the same error handler.
type API struct {
	runs   RunStore
	engine *engine.Engine
	// cache keeps the decoded run GetRun answers with.
	cache *runCache
	// files checks that a decision's attached files are the run's.
	files RunFileStore
}

// RunCreated is the answer to POST /api/runs.
type RunCreated struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Status string `json:"status"`
}

// CheckpointJSON is a pending checkpoint with its typed payload.
type CheckpointJSON struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Iteration int             `json:"iteration"`
	Payload   json.RawMessage `json:"payload"`
	// ShowMore is set at a review whose sources found more than they
	// returned: POST /api/runs/:id/checkpoints/:cp/more fetches the next
	// page.
	ShowMore bool `json:"show_more,omitempty"`
}

// RunJSON is GET /api/runs/:id.
type RunJSON struct {
	ID string `json:"id"`
	// Workflow names the workflow the run runs.
	Workflow          string                 `json:"workflow"`
	Question          string                 `json:"question"`
	Status            string                 `json:"status"`
	Iteration         int                    `json:"iteration"`
	MaxIterations     int                    `json:"max_iterations"`
	Checkpoint        *CheckpointJSON        `json:"checkpoint"`
	Collection        *CollectionJSON        `json:"collection"`
	AccumulatedPapers []research.ScoredPaper `json:"accumulated_papers"`
	History           []IterationJSON        `json:"history"`
	// Notes are what the skills reported about how they worked, such as
	// an LLM skill falling back to the offline heuristics (and why), so a
	// script can tell the model's answer from the fallback's.
	Notes []research.Note `json:"notes"`
	// LLMUsage is what the run spent on language models (absent when it
	// asked none).
	LLMUsage *research.LLMUsage `json:"llm_usage,omitempty"`
	Error    string             `json:"error"`
	// PapersPage says which page of the paper lists (collection,
	// accumulated_papers and a review checkpoint's) the answer holds.
	PapersPage *PapersPageJSON `json:"papers_page"`
	// Stages are the workflow's stages with their states in the current
	// iteration, and ResumeContext where the run stands (engine.Progress).
	Stages        []engine.StageState   `json:"stages"`
	ResumeContext *engine.ResumeContext `json:"resume_context"`
	// GateChecks are every automatic check the run's gates made (type,
	// config, passed, result, error, time), oldest first, each with the
	// stage, iteration and step record (seq) of its visit.
	GateChecks []engine.GateCheck `json:"gate_checks"`
	// Queued says why the run waits for its turn behind a concurrency
	// limit (QUARRY_MAX_ACTIVE_RUNS, QUARRY_WORKFLOW_LIMITS); absent when
	// it does not.
	Queued string `json:"queued,omitempty"`
	// ForkedFrom is the run and checkpoint this run was forked from
	// (POST /api/runs/:id/fork); absent for a run that is not a fork.
	ForkedFrom *engine.ForkOrigin `json:"forked_from,omitempty"`
	// StartedFrom is the stage the run was started at, the state keys it
	// was given and who started it (POST /api/workflows/:name/runs with
	// from); absent for a run started at its first stage the ordinary way.
	StartedFrom *engine.StartOrigin `json:"started_from,omitempty"`
	// ParentRun is the run whose start_workflow stage started this one
	// (absent: none); ChildRuns the runs this run's stages started
	// (run_id, workflow, step, wait; each run's status is its own
	// answer's); Actions every attempt of its built-in actions (stage or
	// hook, action, attempt, status, error, at).
	ParentRun *engine.Parent        `json:"parent_run,omitempty"`
	ChildRuns []engine.ChildLink    `json:"child_runs"`
	Actions   []engine.ActionRecord `json:"actions"`
	// Votes are, per gate several people decide, every vote cast (who,
	// option, input, note, time, replaced, late) and how many more the
	// gate needs (runview.GateVotes).
	Votes []runview.GateVotes `json:"votes"`
	// GateTimers are the run's gate timers (a gate with timeout): due
	// time, extensions, status (pending, fired, canceled) and, once
	// fired, what the timer did (default, escalate, fail, goto:STAGE);
	// GateNotices every event of theirs (entered, extended, timed_out)
	// with whom it was for and whether it was sent (sent, failed with
	// the error, recorded, pending).
	GateTimers  []engine.GateTimer `json:"gate_timers"`
	GateNotices []engine.Notice    `json:"gate_notices"`
}

// VoteJSON answers a vote that did not decide its gate (202): the gate's
// counted votes after it and how many more it needs.
type VoteJSON struct {
	Status string        `json:"status"` // "voted"
	Votes  []engine.Vote `json:"votes"`
	Needed int           `json:"needed"`
}

// PapersPageJSON is the page of a run's paper lists GET /api/runs/:id
// holds: each list's papers from (page-1)*per_page, at most per_page of
// them, and how many each list has in all.
type PapersPageJSON struct {
	Page             int `json:"page"`
	PerPage          int `json:"per_page"`
	Pages            int `json:"pages"`
	CollectionTotal  int `json:"collection_total"`
	AccumulatedTotal int `json:"accumulated_total"`
}

// Page sizes of GET /api/runs/:id's paper lists.
const (
	apiPapersPerPage    = 50
	maxAPIPapersPerPage = 1000
)

// apiPageOf reads GET /api/runs/:id's ?page= and ?per_page=; a value that
// is not a number in range is refused (422 naming it).
func apiPageOf(c echo.Context) (page, per int, err error) {
	page, per = 1, apiPapersPerPage
	fe := fault.FieldErrors{}
	if s := c.QueryParam("page"); s != "" {
		if n, err := strconv.Atoi(s); err != nil || n < 1 {
			fe.Add("page", "must be a whole number from 1")
		} else {
			page = n
		}
	}
	if s := c.QueryParam("per_page"); s != "" {
		if n, err := strconv.Atoi(s); err != nil || n < 1 || n > maxAPIPapersPerPage {
			fe.Add("per_page", fmt.Sprintf("must be a whole number from 1 to %d", maxAPIPapersPerPage))
		} else {
			per = n
		}
	}
	return page, per, fe.Err("invalid page")
}

// CollectionJSON is the run's collection as the API answers it: the merged
// collection (the final one once the run ended, else the review list) with
// each paper's current mark ("" for none) and the counts of the three sets
// the completed page lists apart.
type CollectionJSON struct {
	research.PaperCollection
	Papers []PaperJSON `json:"papers"`
	Counts SetCounts   `json:"counts"`
}

// PaperJSON is a paper of the collection with its current mark.
type PaperJSON struct {
	research.ScoredPaper
	Mark string `json:"mark"`
}

// SetCounts count the papers marked relevant (accumulated over the
// iterations), those nobody screened, and those marked irrelevant.
type SetCounts struct {
	Relevant    int `json:"relevant"`
	NotScreened int `json:"not_screened"`
	Irrelevant  int `json:"irrelevant"`
}

// collectionJSON adds the marks and counts of sets to c (nil stays nil).
func collectionJSON(c *research.PaperCollection, sets pipeline.Sets) *CollectionJSON {
	if c == nil {
		return nil
	}
	out := &CollectionJSON{PaperCollection: *c, Papers: make([]PaperJSON, 0, len(c.Papers)),
		Counts: SetCounts{Relevant: len(sets.Relevant), NotScreened: len(sets.NotScreened), Irrelevant: len(sets.Irrelevant)}}
	for _, p := range c.Papers {
		out.Papers = append(out.Papers, PaperJSON{ScoredPaper: p, Mark: sets.Marks[p.ID]})
	}
	return out
}

// IterationJSON is one iteration of a run's history: the recorded
// iteration's fields as they always were, and whether its strategy was
// searched. An iteration whose strategy was rejected at the strategy
// checkpoint has result_count 0 like a search that found nothing; searched
// tells the two apart, and not_searched_reason says why not.
type IterationJSON struct {
	research.IterationRecord
	Searched          bool   `json:"searched"`
	NotSearchedReason string `json:"not_searched_reason,omitempty"`
	// Found is what each source returned against what it said match
	// ("25 shown of 49 found").
	Found []runview.SourceFound `json:"found,omitempty"`
}

// iterationsJSON is the run's history as the API answers it.
func iterationsJSON(its []runview.Iteration) []IterationJSON {
	out := make([]IterationJSON, 0, len(its))
	for _, it := range its {
		out = append(out, IterationJSON{IterationRecord: it.IterationRecord, Searched: it.Searched, NotSearchedReason: it.NotSearchedReason, Found: it.Found()})
	}
	return out
}

// DecisionInput is POST /api/runs/:id/decisions. DecidedBy is optional
// (scripts have no session); it defaults to "api".
type DecisionInput struct {
	CheckpointID string          `json:"checkpoint_id"`
	Action       string          `json:"action"`
	RevisedData  json.RawMessage `json:"revised_data"`
	Note         string          `json:"note"`
	DecidedBy    string          `json:"decided_by"`
	// Option picks a gate's option by its label, with Input when the
	// option requires it (a definition file's gate, flow.Choose).
	Option string `json:"option"`
	Input  string `json:"input"`
}

// createInput is POST /api/runs: the search's own fields, or a workflow
// by name with its params.
type createInput struct {
	startInput
	Workflow string         `json:"workflow"`
	Params   map[string]any `json:"params"`
}

// decodeJSON reads one JSON object, refusing unknown fields so a typo is an
// error rather than a silently ignored option, and anything after the
// value but white space (text, a second object), which would otherwise be
// ignored as silently. It is the one place the handlers decode a body.
func decodeJSON(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return fault.Errorf(fault.EInvalid, "the request body is empty")
		}
		return fault.Errorf(fault.EInvalid, "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fault.Errorf(fault.EInvalid, "invalid JSON: the body must hold one JSON value, with nothing after it")
	}
	return nil
}

// CreateRun handles POST /api/runs → 201 {id, url, status}.
func (a *API) CreateRun(c echo.Context) error {
	var in createInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	var run engine.Run
	var err error
	if name := strings.TrimSpace(in.Workflow); name != "" && name != SearchWorkflow {
		if in.Question != "" || in.MaxIterations != nil || in.StrategyCheckpoint != nil || in.Sources != nil || in.Clarify != nil || in.QualityGate != nil {
			return &fault.Error{Code: fault.EInvalid, Message: "invalid run", Fields: map[string]string{
				"params": fmt.Sprintf("question, max_iterations, strategy_checkpoint and sources start the search; the %s workflow takes its parameters in params", name)}}
		}
		var by string
		if by, err = author(c, "started_by", in.StartedBy); err != nil {
			return err
		}
		run, err = a.engine.StartAs(c.Request().Context(), engine.Starter{Project: projectOf(c), By: by}, name, in.Params)
	} else {
		if len(in.Params) > 0 {
			return &fault.Error{Code: fault.EInvalid, Message: "invalid run", Fields: map[string]string{
				"params": "the search takes question, max_iterations, strategy_checkpoint, sources and started_by as fields of their own"}}
		}
		in.startInput.Project = projectOf(c)
		if !identityOf(c).open { // open mode takes started_by as sent, or none
			if in.StartedBy, err = author(c, "started_by", in.StartedBy); err != nil {
				return err
			}
		}
		run, err = start(c.Request().Context(), a.engine, in.startInput, nil)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, RunCreated{ID: run.ID, URL: "/runs/" + run.ID, Status: string(run.Status)})
}

// GetRun handles GET /api/runs/:id. Its paper lists come a page at a
// time (?page=, ?per_page=; papers_page says which), so a run of
// thousands of papers answers in kilobytes. The answer is built once per
// run stamp and page (runCache).
func (a *API) GetRun(c echo.Context) error {
	page, per, err := apiPageOf(c)
	if err != nil {
		return err
	}
	e, err := a.cache.getFor(c.Request().Context(), a.runs, c.Param("id"), identityOf(c).name)
	if err != nil {
		return err
	}
	out, body, err := e.json(page, per)
	if err != nil {
		return err
	}
	// Being queued changes no run stamp, so it is not in the cached body.
	if out.Queued = queuedBehindLimit(c.Request().Context(), a.runs, e.run); out.Queued != "" {
		return c.JSON(http.StatusOK, out)
	}
	if c.Echo().Debug || c.QueryParams().Has("pretty") {
		return c.JSON(http.StatusOK, out)
	}
	return c.JSONBlob(http.StatusOK, body)
}

// Decide handles POST /api/runs/:id/decisions → 202; at a gate several
// people decide the decision is a vote (engine.Vote), answered with the
// votes so far (VoteJSON) while the gate still waits; 409 when the
// checkpoint is no longer pending; 422 when the revised data is invalid.
func (a *API) Decide(c echo.Context) error {
	var in DecisionInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.CheckpointID) == "" {
		return &fault.Error{Code: fault.EInvalid, Message: "invalid decision", Fields: map[string]string{"checkpoint_id": "is required"}}
	}
	by, err := author(c, "decided_by", in.DecidedBy)
	if err != nil {
		return err
	}
	if string(in.RevisedData) == "null" {
		in.RevisedData = nil
	}
	if err := a.checkDecisionFiles(c.Request().Context(), c.Param("id"), in); err != nil {
		return err
	}
	d := engine.Decision{Action: engine.DecisionAction(in.Action), RevisedData: in.RevisedData, Note: in.Note, DecidedBy: by}
	if strings.TrimSpace(in.Option) != "" {
		if len(in.RevisedData) > 0 {
			return &fault.Error{Code: fault.EInvalid, Message: "invalid decision", Fields: map[string]string{"option": "an option is chosen alone: send option (and input), not revised_data"}}
		}
		if in.Action != "" && in.Action != string(engine.Approve) {
			return &fault.Error{Code: fault.EInvalid, Message: "invalid decision", Fields: map[string]string{"action": "choosing an option approves the gate: send approve or no action"}}
		}
		d = flow.Choose(strings.TrimSpace(in.Option), in.Input, by)
		d.Note = in.Note
	}
	ctx := c.Request().Context()
	run, err := a.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if d, err = withStoredMarks(ctx, a.runs, a.engine, run, in.CheckpointID, d); err != nil {
		return err
	}
	b, err := a.engine.Vote(ctx, run.ID, in.CheckpointID, d)
	if err != nil {
		return err
	}
	if !b.Resolved() {
		return c.JSON(http.StatusAccepted, VoteJSON{Status: "voted", Votes: b.Votes, Needed: b.Needed})
	}
	return c.JSON(http.StatusAccepted, map[string]string{"status": "accepted"})
}
