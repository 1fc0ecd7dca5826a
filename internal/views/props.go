package views

import (
	"strconv"
	"time"

	"github.com/a-h/templ"

	"quarry/internal/research"
)

// Page is what every full page needs from the request: the CSRF token its
// forms must carry and who is looking, so the header can say it.
type Page struct {
	CSRF   string
	Person string
}

// Choice is one checkbox of a multiple choice, with whether it is ticked.
type Choice struct {
	Value   string
	Checked bool
}

// RunSummary is one line of the home page's run list.
type RunSummary struct {
	ID        string
	Question  string
	Status    string
	Iteration int
	CreatedAt time.Time
}

// StartForm is the start-a-run form with the values the person typed and,
// after a failed submit, an error per field (keyed by parameter name).
type StartForm struct {
	// Available is false when no "search" workflow is registered.
	Available     bool
	Question      string
	Sources       []Choice
	MaxIterations string
	// IterationsMax is the workflow's upper bound on max_iterations, for
	// the input's max attribute ("" when the workflow sets none).
	IterationsMax   string
	ConfirmStrategy bool
	Errors          map[string]string
	// Clarify and QualityGate are the run's clarify and quality_gate
	// parameters (both off by default).
	Clarify, QualityGate bool
	// DualScreening has two people screen each paper blind, a third
	// resolving their disagreements (the run's screeners and conflicts).
	DualScreening bool
	// SelectionOnly searches only the project's library selection, not
	// the whole local library (the run's library parameter).
	SelectionOnly bool
	// Projects are where the person may start runs: more than one shows a
	// choice, one a hidden field, none (open mode) nothing. Project is
	// the chosen one.
	Projects []Option
	Project  string
}

// HomeData is the home page.
type HomeData struct {
	Page Page
	Form StartForm
	Runs []RunSummary
}

// NameData is the first-visit form asking for a display name.
type NameData struct {
	Page  Page
	Name  string
	Next  string
	Error string
}

// StrategyForm is checkpoint 1: the parsed intent and the editable strategy,
// as strings so that invalid input is shown back exactly as typed.
type StrategyForm struct {
	RunID        string
	CheckpointID string
	Iteration    int
	Intent       research.ParsedIntent
	Queries      []string
	Sources      []Choice
	YearFrom     string
	YearTo       string
	MaxResults   string
	IncludeTerms string
	ExcludeTerms string
	// FieldsOfStudy restricts Semantic Scholar's search (comma-separated);
	// FieldChoices are the names it accepts, listed in the hint.
	FieldsOfStudy string
	FieldChoices  []string
	// Learned are the terms the builder learned or read (issue 16), each
	// with its provenance and a box the researcher unticks to remove it.
	Learned []LearnedChoice
	// SentAs holds, by query text, each source's form of the queries as
	// the strategy proposed them, so the researcher sees what each source
	// will receive; an edited text has none until the edit is saved.
	SentAs map[string]map[string]string
	Note   string
	// Files are the files attached to the strategy (ticked ones stay);
	// FileMessage says what the last attachment read or why it failed.
	Files       []AttachedFileChoice
	FileMessage string
	FileError   string
	// Formats are the import formats the attach control offers.
	Formats []string
	// Errors maps engine field paths ("queries[1].text", "year_range.from")
	// to messages; the template looks them up next to each input.
	Errors map[string]string
	// EnterNotice is set when the form came back because Enter was pressed
	// in a field: it says that nothing was decided and how to decide.
	EnterNotice string

	// MaxIterations is the run's loop bound (0: not known, and the form
	// reads as any iteration's). At the bound rejecting cannot build
	// another strategy: it ends the run, and the form says so.
	MaxIterations int

	// Findings are the strategy review's, each with its severity and
	// whether it blocks approval at this iteration; QualityGate says
	// whether blocking ones refuse an approval without a note.
	Findings    []research.Finding
	QualityGate bool
}

// Blocked reports whether a finding blocks approving the strategy as is.
func (f StrategyForm) Blocked() bool { return len(research.Blocking(f.Findings)) > 0 }

// ClarifyForm is the clarifying-questions checkpoint: each question with
// its options as radio buttons, and the person's own answer where the
// question takes one. Answers and Other hold what was submitted (by
// question ID), so a refused answer comes back as it was typed.
type ClarifyForm struct {
	RunID        string
	CheckpointID string
	Question     string
	Questions    []research.ClarifyingQuestion
	Answers      map[string]string
	Other        map[string]string
	Errors       map[string]string
}

// AttachedFileChoice is one attached file in the strategy form; Value is
// what its checkbox posts back.
type AttachedFileChoice struct {
	File    research.AttachedFile
	Value   string
	Checked bool
}

// PaperGroup is one of the organizer's themes with its papers in order.
type PaperGroup struct {
	Label  string
	Papers []research.ScoredPaper
}

// Mark values of the review form's radio buttons.
const (
	MarkRelevant   = "relevant"
	MarkIrrelevant = "irrelevant"
	MarkUnsure     = "unsure"
)

// ReviewForm is checkpoint 2: this iteration's papers by group, the marks
// given so far (paper ID → mark) and the accumulated papers.
type ReviewForm struct {
	RunID        string
	CheckpointID string
	Iteration    int
	Groups       []PaperGroup
	Sources      map[string]research.SourceResult
	Marks        map[string]string
	// Notes are the per-paper notes (paper ID → note): those kept from
	// earlier reviews, or what was typed when the form comes back.
	Notes map[string]string
	// Reasons are the exclusion reasons of papers marked irrelevant.
	Reasons     map[string]string
	Feedback    string
	Accumulated []research.ScoredPaper
	Errors      map[string]string
	// EnterNotice is set when the form came back because Enter was pressed
	// in a field: it says that nothing was decided and how to decide.
	EnterNotice string

	// MaxIterations is the run's loop bound (0: not known, and the form
	// reads as any iteration's). At the bound there is no next iteration:
	// every decision finishes the run, and the form offers only that.
	MaxIterations int

	// Highlight are the question's concepts (terms and synonyms) and the
	// strategy's include terms, marked in the papers' titles and
	// abstracts so a screener sees at a glance why a paper is there.
	Highlight []string
	// ExclusionReasons are the reasons offered for excluding a paper, in
	// the order keys 1–9 choose them; empty means
	// research.DefaultExclusionReasons.
	ExclusionReasons []string
	// Progress, when set, is the screening progress of the whole review
	// (the handler counts it over every paper under review, which the
	// form may show only some of); nil counts the papers in Groups.
	Progress *Progress

	// Screening is the run's screening progress and stopping suggestions,
	// shown at the top of the review (nil: none).
	Screening *Screening

	// Stored, when set, are the papers' stored marks while the form shows
	// what was posted over them (a 422): the baselines the form posts
	// back (Drawn) must be what is stored, or a resubmit would drop the
	// person's unsaved changes as unchanged.
	Stored map[string]Drawn
	// CanShowMore offers "Show more": a source of the review found more
	// than it returned (pipeline.HasMore).
	CanShowMore bool

	// Papers, when set, is ReviewPapers of this form rendered before: the
	// same for every person, so a server can render it once per run state
	// rather than on every request.
	Papers templ.Component

	// List is how Groups were sorted, filtered and paged from the whole
	// review (Groups then hold only the page shown).
	List ReviewListState
}

// ReviewQuery is how the review list is sorted, filtered and paged: the
// query of GET /runs/:id, so a reload or a shared link shows the same
// list. The zero value is the whole review by theme, first page.
type ReviewQuery struct {
	// Sort is "" (by theme, best theme first), "score", "year", "title"
	// or "mark" (not yet screened first).
	Sort string
	// Mark is "" (any), "relevant", "irrelevant" or "unsure" (not
	// screened: unsure or never marked).
	Mark   string
	Source string
	Theme  string
	Year   int
	// Page counts from 1; PerPage is one of ReviewPerPage.
	Page    int
	PerPage int
}

// ReviewListState says what part of the review the page shows, and what the
// list's controls offer.
type ReviewListState struct {
	Query ReviewQuery
	// Total is the papers under review; Matching those the filters keep;
	// First and Last the positions (from 1) shown; Pages the pages of
	// Matching.
	Total, Matching, First, Last, Pages int
	// Sources, Themes and Years are the values the filters offer.
	Sources, Themes []string
	Years           []int
	// Rest is how many papers on the page are not screened: what "mark
	// the rest of this page irrelevant" would mark.
	Rest int
	// Confirm asks, without JavaScript, whether to mark the rest.
	Confirm bool
	// Undo offers to restore the papers the last "mark the rest" marked,
	// while they still hold that mark.
	Undo *RestUndo
}

// RestUndo is a "mark the rest" that can be undone: the time its marks
// were stored (which names them) and how many still hold it.
type RestUndo struct {
	At    string
	Count int
}

// SubmittedReview is a review submit that was not recorded because the
// checkpoint had been decided meanwhile.
type SubmittedReview struct {
	Feedback string
	// Papers are the papers the submit marked relevant or irrelevant or
	// wrote a note on, in the order the review showed them.
	Papers []SubmittedPaper
}

// SubmittedPaper is one paper's mark and note in a SubmittedReview; Title
// is empty when the paper is not in the reviewed collection.
type SubmittedPaper struct {
	ID, Title, Mark, Note string
}

// SubmittedStrategy is a strategy-form submit that was not recorded
// because the checkpoint had been decided meanwhile: the form's values as
// the person left them, each field as its text so it can be copied back.
type SubmittedStrategy struct {
	Queries                      []string
	Sources                      []string
	YearFrom, YearTo, MaxResults string
	IncludeTerms, ExcludeTerms   string
	FieldsOfStudy                string
	// Files are the names of the attached files the submit kept ticked.
	Files []string
	Note  string
}

// DecisionRow is one decision in a run's read-only history.
type DecisionRow struct {
	// RunID and CheckpointID address the "Fork from here" button.
	RunID, CheckpointID string
	Kind                string
	Iteration           int
	Action              string
	By                  string
	At                  time.Time
	Note                string
	// TimedOut is the option a gate's timer took, "" for a decision
	// someone made.
	TimedOut string
}

// IterationRow is one pass of the loop in the history table.
type IterationRow struct {
	Iteration   int
	Queries     []string
	Sources     []string
	ResultCount int
	// Searched is false while the iteration's search has not run yet (its
	// strategy is still being confirmed), so no count is shown.
	Searched bool
	// Found says per source what it returned against what it said match
	// ("local: 25 shown of 49 found").
	Found      []string
	Relevant   int
	Irrelevant int
	Feedback   string

	// StrategyRejected is set when the iteration's strategy was rejected
	// at checkpoint 1: it was never searched and never will be, so it has
	// no result count (not even 0) and is not "not searched yet".
	StrategyRejected bool
}

// RunStatus is the live part of the run page, polled and streamed.
type RunStatus struct {
	ID string
	// Version is the run's version: it changes with every transition, and
	// static/app.js redraws the workflow panel's drawing when it (or
	// Branches) does.
	Version int64
	// Branches is the run's branch stamp (store.RunStamp.Branches): it
	// grows as a parallel stage's branches commit, which leaves Version.
	Branches     int64
	Status       string
	Iteration    int
	Step         string
	CheckpointID string
	Error        string
	// Queued says why the run waits for its turn behind a concurrency
	// limit ("" when it does not).
	Queued string
	// HoldsInput is set when the page shows what a losing submit carried:
	// text the person typed, which a reload would throw away, so the poller
	// asks for the stale banner instead (typed=1). A checkpoint form counts
	// only once edited, which static/app.js reports with each poll (dirty=1).
	HoldsInput bool
}

// StaleNotice is what the status line says, instead of reloading, on a
// page holding input once the run has moved on: who decided the page's
// checkpoint, how and when (By empty when it was not decided, e.g. the run
// was canceled or the page showed no checkpoint), and the run's status now.
type StaleNotice struct {
	By     string
	Action string
	At     time.Time
	Status string
}

// RunData is the run page.
type RunData struct {
	Page Page
	// DualScreening is set when Screeners (more than one) people screen
	// each paper blind.
	DualScreening bool
	Screeners     int
	// Workflow is where the run stands in its workflow (nil: not known).
	Workflow      *RunWorkflow
	Question      string
	MaxIterations int
	Status        RunStatus
	// Conflict is set when a decision lost a race: it names who decided.
	Conflict string
	// Submitted is what the losing review carried (feedback, marks,
	// notes), shown read-only in the conflict box so nothing typed is lost.
	Submitted *SubmittedReview
	// SubmittedStrategy is the same for a losing strategy-form submit.
	SubmittedStrategy *SubmittedStrategy
	Strategy          *StrategyForm
	Review            *ReviewForm
	// Clarify is set at the clarifying-questions checkpoint.
	Clarify *ClarifyForm
	// Escalation is set when a step failed every attempt.
	Escalation *EscalationForm
	// Gate is set at a workflow file's gate with options.
	Gate      *GateForm
	History   []IterationRow
	Decisions []DecisionRow
	// Final is the last reviewed collection, shown once the run ended.
	Final       *PaperGroupSet
	Accumulated []research.ScoredPaper
	// HasReport is true for search runs, which offer the search-strategy
	// report (Markdown and CSV) for download.
	HasReport bool
	// HasPapers is true once a search has run, when the run's papers can
	// be exported; HasAccumulated once some are marked relevant.
	HasPapers      bool
	HasAccumulated bool
	// Notes are what the skills reported about how they worked, above all
	// an LLM skill that fell back to its offline variant (and why).
	Notes []research.Note
	// LLMUsage is what the run spent on language models (nil when it
	// asked none).
	LLMUsage *research.LLMUsage
	// Screening is a search run's screening progress, at its review and
	// once complete (nil otherwise).
	Screening *Screening
	// Links are the runs this one is linked to and its actions.
	Links RunLinks
}

// PaperGroupSet is a completed run's final collection as the researcher
// reads it: three sets, each with its count — the papers marked relevant
// (accumulated over the iterations: what the run found), the papers
// nobody screened (no mark, or unsure), and the papers marked irrelevant.
type PaperGroupSet struct {
	Relevant    []research.ScoredPaper
	NotScreened []research.ScoredPaper
	// Rejected are the papers marked irrelevant, listed apart with their
	// exclusion reasons so the researcher sees what was excluded and why.
	Rejected []research.ScoredPaper
	// Marks, Notes and Reasons are each paper's current mark ("unsure"
	// among the not screened), note and exclusion reason by paper ID.
	Marks   map[string]string
	Notes   map[string]string
	Reasons map[string]string
}

// WorkflowView is one workflow drawn for people.
type WorkflowView struct {
	Name        string
	Title       string
	Description string
	// SVG is the diagram as an <svg> element from wfgraph: markup the page
	// inlines as it is, which is safe because Graphviz escapes every text
	// it writes. DrawError replaces it when drawing failed.
	SVG       string
	DrawError string
	Mermaid   string
	Steps     []WorkflowStep
	Edges     []WorkflowEdge
	// Start is the start form of a built-in template (nil for a workflow
	// that starts elsewhere, as the search does from the home page).
	Start *WorkflowStartForm // Triggers start the workflow by themselves; Firings are their last
	// firings, newest first; TriggerError says why they could not be read.
	Triggers     []WorkflowTrigger
	Firings      []WorkflowFiring
	TriggerError string
}

// WorkflowTrigger is one trigger of a workflow: a schedule with its next
// due time, or a webhook with its URL and token.
type WorkflowTrigger struct {
	Name, Kind, Schedule, NextDue string
	URL, Token                    string
}

// WorkflowFiring is one firing of a workflow's trigger: the run it
// started, or why none.
type WorkflowFiring struct {
	Trigger, Kind, At, RunID, Error string
	Missed                          int
}

// WorkflowStep is one stage of a drawn workflow, in definition order.
type WorkflowStep struct {
	ID, Label, Detail string
}

// WorkflowEdge is one transition of a drawn workflow; Back marks a loop.
type WorkflowEdge struct {
	From, To, Label string
	Back            bool
}

// WorkflowFile is one definition file of the workflows directory: drawn
// when it loads, else its problems, each "file:line:col: message".
type WorkflowFile struct {
	File     string
	Name     string // metadata.name when the file got that far
	Workflow *WorkflowView
	Errors   []string
	// Start is its start form when it can start runs; NotStartable says
	// why not otherwise.
	Start        *WorkflowStartForm
	NotStartable string
}

// WorkflowStartForm starts a run of a workflow file from its declared
// params.
type WorkflowStartForm struct {
	Name, Title string
	Params      []StartParam
	// Error is why the last start was refused.
	Error string
	// Projects and Project are as in StartForm.
	Projects []Option
	Project  string
}

// StartParam is one parameter's field: its type (string, int, float,
// bool, list), the value to show (the default, or what was sent) and its
// error.
type StartParam struct {
	Name, Type, Description string
	Required                bool
	Value, Error            string
}

// WorkflowsData is the workflow page: the built-in workflows, then the
// files of Dir (QUARRY_WORKFLOWS_DIR; "" when not configured, DirError
// when it cannot be read).
type WorkflowsData struct {
	Page      Page
	Workflows []WorkflowView
	Dir       string
	DirError  string
	Files     []WorkflowFile
}

// EscalationForm asks a person to retry, skip or abort a failed step.
type EscalationForm struct {
	RunID, CheckpointID string
	Step, Error         string
	Attempts            int
	// CanSkip is false when the step has no skip path (the engine would
	// refuse a skip).
	CanSkip bool
	// Resume is set when a restart found the step waiting to retry and
	// its definition asks a person first (on_error.resume: ask); then
	// MaxAttempts bounds its attempts.
	Resume      bool
	MaxAttempts int
}

// LearnedChoice is one learned term on the strategy form: what it is, how
// the strategy uses it, where it came from, and whether it is kept.
type LearnedChoice struct {
	research.LearnedTerm
	Kept bool
}

// RunWorkflow is the run page's workflow panel: the run's workflow drawn
// with its stages' states (an image, /runs/:id/graph.svg) and where the
// run stands (the API's resume_context).
type RunWorkflow struct {
	RunID string
	// Version and Branches are the run's version and branch stamp: the
	// drawing's address changes with them (DrawnVersion).
	Version, Branches int64
	Name              string
	// Stages are the stages in order, each "id: state".
	Stages []WorkflowStageState
	// Current is the current stage ("" once ended).
	Current   string
	Completed []string
	// Retry is a failed attempt of the current stage to be tried again
	// (or settled by a person), as "attempt N: error"; "" for none.
	Retry string
	// LastOutput names the stage whose output came last and its size.
	LastOutput      string
	LastOutputBytes int
	// StartedAt is the stage the run was started at, with the state keys
	// it was given and who started it ("": started at its first stage).
	StartedAt, StartedBy string
	Given                []string
}

// WorkflowStageState is one stage of a run and its state.
type WorkflowStageState struct {
	ID, Type, State string
	Attempts        int
}

// GateForm is a workflow file's gate waiting for a person: its options
// (label, whether it needs input), the context keys it shows and its
// conditions' results.
type GateForm struct {
	RunID, CheckpointID, Stage string
	Options                    []GateOptionView
	TakesInput                 bool
	Context                    []KeyValue
	Checks                     []GateCheckView
	// Error and Input are a refused choice's message and the input sent.
	Error, Input string
	// Approval is set at a gate several people decide: its votes so far
	// and how many more it needs.
	Approval *GateApprovalView
	// Timer is set while the gate's timer runs: when it decides itself.
	Timer *GateTimerView
}

// GateTimerView is a gate's pending timer: at Due the gate takes Default
// or, without one, extends its time (Extensions of MaxExtensions done)
// or, once they are used up, times out.
type GateTimerView struct {
	Due                       time.Time
	Default                   string
	Extensions, MaxExtensions int
}

// GateApprovalView is a gate's vote count: Count people must choose the
// same option of Passing; Needed more votes are needed, Waiting of the
// Of people expected have not voted (Of 0: not known).
type GateApprovalView struct {
	Count, Of, Needed, Waiting int
	// Expected names who has not voted yet, when the gate names its voters.
	Expected []string
	Passing  []string
	Votes    []GateVoteView
}

// GateVoteView is one vote as the form lists it.
type GateVoteView struct {
	Voter, Option, Input, Note, At string
	Replaced                       bool
}

// GateOptionView is one option's button.
type GateOptionView struct {
	Label         string
	RequiresInput bool
}

// KeyValue is one context key a gate shows, its value as JSON.
type KeyValue struct{ Key, Value string }

// GateCheckView is one condition's result: "passed", "did not pass" or
// the evaluation error.
type GateCheckView struct{ Condition, Result string }

// DrawnVersion names what a run's drawing shows: its version, and its
// branch stamp once a parallel stage has branches. The status line and the
// drawing carry it, so static/app.js refetches the drawing when it moves.
func DrawnVersion(version, branches int64) string {
	if branches == 0 {
		return strconv.FormatInt(version, 10)
	}
	return strconv.FormatInt(version, 10) + "." + strconv.FormatInt(branches, 10)
}
