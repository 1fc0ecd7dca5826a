package pipeline

import (
	"cmp"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// Name is the search workflow's registry name; pages and the API start runs
// with it, so it is a constant rather than a string repeated by callers.
const Name = "search"

// Step IDs of the search workflow, exported so pages can say where a run is
// and tests can assert on the path it took.
const (
	StepParse           = "parse"
	StepClarify         = "clarify"
	StepBuild           = "build"
	StepConfirmStrategy = "confirm_strategy"
	StepSearch          = "search"
	StepDedup           = "dedup"
	StepScore           = "score"
	StepOrganize        = "organize"
	StepReview          = "review"
	StepFinalize        = "finalize"
)

// Run parameter names, exported so forms and the API build the start input
// without spelling them again.
const (
	ParamQuestion           = "question"
	ParamMaxIterations      = engine.MaxIterationsParam
	ParamStrategyCheckpoint = "strategy_checkpoint"
	ParamSources            = "sources"
	// ParamStartedBy names who started the run (the display name of the
	// person, or what an API client says), for the search-strategy report.
	ParamStartedBy = "started_by"
	// ParamClarify makes the run ask clarifying questions before it
	// builds the strategy, when the question is ambiguous (off by
	// default: most questions lack a time frame, and a run that always
	// asks first would be one more step for every search).
	ParamClarify = "clarify"
	// ParamQualityGate makes the strategy review's blocking findings
	// refuse an approval without a note (off by default: the findings
	// are then shown as warnings only).
	ParamQualityGate = "quality_gate"
	// ParamScreeners is how many people screen each paper independently
	// (research.ScreeningPlan.Reviewers); ParamConflicts who resolves
	// their disagreements (research.ResolveByThird, ResolveByPair).
	ParamScreeners = "screeners"
	ParamConflicts = "conflicts"
	// ParamLibrary is how much of the local library the run searches:
	// research.LibraryAll, or research.LibraryProject (the run's
	// project's library selection).
	ParamLibrary = "library"
)

// LibrarySelectionOf is the project whose library selection a search run
// searches, or "" when it searches the whole library (the default, and
// always for a run of no project).
func LibrarySelectionOf(r engine.Run) string { return librarySelection(r.Params, r.Project) }

func librarySelection(params engine.Params, project string) string {
	if params.String(ParamLibrary) == research.LibraryProject {
		return project
	}
	return ""
}

// ScreeningPlanOf is how a search run's papers are screened.
func ScreeningPlanOf(r engine.Run) research.ScreeningPlan {
	return research.ScreeningPlan{Reviewers: max(r.Params.Int(ParamScreeners), 1), Resolver: cmp.Or(r.Params.String(ParamConflicts), research.ResolveByThird)}
}

// State keys the steps write. They are the run's durable memory, so a
// renamed key would orphan stored runs: change them only with a migration.
const (
	keyIntent     = "intent"
	keyStrategy   = "strategy"
	keySearch     = "search"
	keySearchedAt = "searched_at"
	keyDeduped    = "deduped"
	keyDedupStats = "dedup_stats"
	keyScored     = "scored"
	keyCollection = "collection"
	keyWorkflow   = "workflow"
	keyIrrelevant = "marked_irrelevant"
	keyFinal      = "final"
	keyNotes      = "notes"
	// keyLLMUsage is what the run spent on language models so far.
	keyLLMUsage = "llm_usage"
	// keyRemovedLearned lists the learned exclusions the researcher removed
	// at a strategy checkpoint, which later builds must not learn again.
	keyRemovedLearned = "removed_learned_exclusions"
	// keyClarify holds the clarifying questions the parse step found
	// (none when the run does not ask them or the question is clear).
	keyClarify = "clarifying_questions"
)

// RunState is everything pages and the API show about a search run, decoded
// from the engine's untyped state in one place so no handler needs to know
// the state keys or their Go types.
type RunState struct {
	// Question is the research question the run was started with.
	Question string `json:"question"`
	// Intent is the parsed question (nil before the parse step ran).
	Intent *research.ParsedIntent `json:"intent,omitempty"`
	// Strategy is the current iteration's strategy, as confirmed or edited.
	Strategy *research.SearchStrategy `json:"strategy,omitempty"`
	// Collection is the current iteration's organised result (nil until
	// the organize step ran).
	Collection *research.PaperCollection `json:"collection,omitempty"`
	// Final is the run's final collection (nil until finalize ran).
	Final *research.PaperCollection `json:"final,omitempty"`
	// Workflow is the loop's memory: history, accumulated papers, completion.
	Workflow research.WorkflowState `json:"workflow"`
	// MarkedIrrelevant holds the papers marked irrelevant so far.
	MarkedIrrelevant []research.ScoredPaper `json:"marked_irrelevant,omitempty"`
	// Notes are what skills reported about how they worked (e.g. fallbacks).
	Notes []research.Note `json:"notes,omitempty"`
	// LLMUsage is what the run spent on language models (nil when it
	// asked none).
	LLMUsage *research.LLMUsage `json:"llm_usage,omitempty"`
}

// StateOf decodes a search run's state. It fails with EInvalid for a run of
// another workflow and with EInternal when a stored value cannot be decoded.
func StateOf(run engine.Run) (RunState, error) {
	if run.Workflow != "" && run.Workflow != Name {
		return RunState{}, fault.Errorf(fault.EInvalid, "run %s is a %q run, not a %q run", run.ID, run.Workflow, Name)
	}
	var rs RunState
	rs.Question = run.Params.String(ParamQuestion)
	var err error
	if rs.Intent, err = optional[research.ParsedIntent](run.State, keyIntent); err != nil {
		return RunState{}, err
	}
	if rs.Strategy, err = optional[research.SearchStrategy](run.State, keyStrategy); err != nil {
		return RunState{}, err
	}
	if rs.Collection, err = optional[research.PaperCollection](run.State, keyCollection); err != nil {
		return RunState{}, err
	}
	if rs.Final, err = optional[research.PaperCollection](run.State, keyFinal); err != nil {
		return RunState{}, err
	}
	if rs.Workflow, _, err = engine.Get[research.WorkflowState](run.State, keyWorkflow); err != nil {
		return RunState{}, err
	}
	if rs.MarkedIrrelevant, _, err = engine.Get[[]research.ScoredPaper](run.State, keyIrrelevant); err != nil {
		return RunState{}, err
	}
	if rs.Notes, rs.LLMUsage, err = NotesOf(run.State); err != nil {
		return RunState{}, err
	}
	return rs, nil
}

// NotesOf decodes what a run's skills noted and what it spent on language
// models (nil when it asked none), whatever its workflow: the search's
// steps keep them in its state, and so do workflow files' skill stages
// (SkillScope), under the same keys.
func NotesOf(s engine.State) ([]research.Note, *research.LLMUsage, error) {
	notes, _, err := engine.Get[[]research.Note](s, keyNotes)
	if err != nil {
		return nil, nil, err
	}
	usage, err := optional[research.LLMUsage](s, keyLLMUsage)
	return notes, usage, err
}

// optional decodes key into a *T, nil when the key is absent or null.
// IntentOf decodes only a search run's parsed question (nil before the
// parse step ran), for pages that need its concepts but not the rest of
// the state, such as the review highlighting them in titles.
func IntentOf(run engine.Run) (*research.ParsedIntent, error) {
	return optional[research.ParsedIntent](run.State, keyIntent)
}

// FindingsOf reviews strategy s as the run's strategy checkpoint at
// iteration would (ReviewStrategy, with Blocks set when the run enforces
// the quality gate), so a form refused for an edit can show the findings
// of what the person typed rather than of the proposal. available are
// the sources the run could search.
func FindingsOf(run engine.Run, s research.SearchStrategy, iteration int, available []string) ([]research.Finding, error) {
	intent, err := IntentOf(run)
	if err != nil || intent == nil {
		return nil, err
	}
	wfs, _, err := engine.Get[research.WorkflowState](run.State, keyWorkflow)
	if err != nil {
		return nil, err
	}
	return research.WithBlocks(ReviewStrategy(*intent, s, wfs.History, available), iteration, run.Params.Bool(ParamQualityGate)), nil
}

func optional[T any](s engine.State, key string) (*T, error) {
	raw, ok := s[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	v, _, err := engine.Get[*T](s, key)
	return v, err
}
