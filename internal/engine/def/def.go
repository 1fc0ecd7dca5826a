// Package def reads workflow definition files (apiVersion quarry/v1, kind
// Workflow): it decodes the YAML strictly, keeping where every value was
// written, and validates the whole definition at load so that a mistake is
// reported as file:line:col before any run starts. It knows nothing of how
// stages run; the engine turns a Definition into runs.
//
// docs/workflows.md is the format's reference; keep the two in step.
package def

import "time"

// The format's fixed names.
const (
	APIVersion = "quarry/v1"
	Kind       = "Workflow"
	// Complete is the target that ends the run (or, inside a parallel
	// branch, ends the branch).
	Complete = "complete"
)

// Pos is where a value was written: 1-based line and column.
type Pos struct{ Line, Col int }

// Definition is one workflow file, decoded.
type Definition struct {
	File string
	// Hash is the SHA-256 of the file's bytes (hex), so a run can record
	// exactly which text it runs.
	Hash string
	// Text is the file's content, kept so a run can store the exact text
	// it runs (engine.Source) and be finished by it after an edit.
	Text       string
	APIVersion string
	Kind       string
	Metadata   Metadata
	Params     []Param
	// Context is the initial context, in file order; string values may
	// template params.
	Context []Field
	// Stages run from the first, which is the entry.
	Stages []*Stage
	// Backup asks for a database backup before each run's first stage.
	Backup bool
	// Triggers start runs on a schedule or from an inbound webhook.
	Triggers []Trigger
	// MaxActiveRuns bounds the workflow's runs executing at once
	// (concurrency.runs; 0: no bound of its own).
	MaxActiveRuns int
	// OnComplete and OnError are the actions run when a run completes or
	// fails (workflow-level hooks).
	OnComplete []*Hook
	OnError    []*Hook

	exprs []exprRef // top-level context templates
}

// Metadata names and describes a definition.
type Metadata struct {
	Name        string
	Title       string
	Description string
	// Version defaults to 1; a run records it next to Hash.
	Version int
}

// ParamType is a declared parameter's type.
type ParamType string

// The parameter types.
const (
	ParamString ParamType = "string"
	ParamInt    ParamType = "int"
	ParamFloat  ParamType = "float"
	ParamBool   ParamType = "bool"
	ParamList   ParamType = "list" // a list of strings
)

// Param declares one run parameter: enough to draw and check a form.
type Param struct {
	Name        string
	Type        ParamType
	Required    bool
	Default     any // of Type: string, int64, float64, bool or []string; nil when absent
	Min, Max    *float64
	Enum        []string
	Description string
	Pos         Pos
}

// Field is one key of a map the file writes (context, with, set, headers):
// Value is a plain Go value (string, int64, float64, bool, nil, []any,
// map[string]any); for set it is the expression's source.
type Field struct {
	Key   string
	Value any
	Pos   Pos
}

// StageType is what a stage does.
type StageType string

// The stage types.
const (
	TypeSkill    StageType = "skill"
	TypeAction   StageType = "action"
	TypeSet      StageType = "set"
	TypeGate     StageType = "gate"
	TypeParallel StageType = "parallel"
	TypeDelay    StageType = "delay"
	TypeWebhook  StageType = "webhook"
)

// Target names the stage a transition goes to (or Complete); ID is "" when
// the file does not set it.
type Target struct {
	ID  string
	Pos Pos
}

// Expr is an expression's source and where it was written.
type Expr struct {
	Src string
	Pos Pos
}

// Limit is a max_iterations: a number, or an expression (usually
// "{{ params.max_iterations }}") evaluated when the run starts.
type Limit struct {
	N    int
	Expr string
	Pos  Pos
}

// Set reports whether the file gave a limit.
func (l Limit) Set() bool { return l.N > 0 || l.Expr != "" }

// Then is what happens when retries or iterations run out.
type Then struct {
	Action string // ThenEscalate, ThenFail or ThenGoto; "" = not written (fail)
	Goto   Target
}

// The actions of a Then.
const (
	ThenEscalate = "escalate"
	ThenFail     = "fail"
	ThenGoto     = "goto"
)

// OnError is a stage's retry policy. Resume says what a restart does
// to a stage waiting out its backoff: ResumeAuto ("", the default)
// retries it, ResumeAsk waits for a person to say resume.
type OnError struct {
	Retry   int
	Backoff time.Duration
	Then    Then
	Resume  string
}

// The values of on_error.resume.
const (
	ResumeAuto = "auto"
	ResumeAsk  = "ask"
)

// OnFail is where a gate goes when its conditions fail.
type OnFail struct {
	Goto          Target
	Context       []Field
	MaxIterations Limit
	Then          Then
}

// Output is a value a skill stage declares it produces.
type Output struct {
	Name     string
	Required bool
	Pos      Pos
}

// Option is one choice a person has at a gate.
type Option struct {
	Label         string
	Next          Target
	RequiresInput bool
	Pos           Pos
}

// Approval makes a gate with options wait for several people: it passes
// when Count distinct people chose the same option of Options (the
// passing ones; the gate's other options fail it), and fails as soon as
// it can no longer pass (engine.Approval.Tally). Of is how many people
// are expected (0: not known).
type Approval struct {
	Count int
	Of    int
	// Voters, when written, are the only people who may vote, by name;
	// Of is then their number, and pages name who has not voted yet.
	Voters []string
	// From, when written, is the least project role a voter must hold
	// ("owner" or "reviewer"; written owners/reviewers); NoSelf
	// (self_approval: false) refuses the vote of the person who started
	// the run.
	From    string
	NoSelf  bool
	Options []string
	// Inline is set when approval.options are the gate's options
	// themselves ({label, next, …}, no options key): then every option
	// passes, and the first that Count people choose is taken.
	Inline bool
	Pos    Pos

	defined []Option

	keys      map[string]Pos
	voterPos  []Pos
	optionPos []Pos
}

// OnTimeout is what a gate with a timeout does when nobody chose in time:
// take Default (an option's label), or extend the time by Extend up to
// MaxExtensions times and then follow Then.
type OnTimeout struct {
	Default       string
	Extend        time.Duration
	MaxExtensions int
	Then          Then
	Pos           Pos

	keys map[string]Pos
}

// at is where a key of on_timeout was written, or on_timeout itself.
func (o *OnTimeout) at(key string) Pos {
	if p, ok := o.keys[key]; ok {
		return p
	}
	return o.Pos
}

// Notice is one target of a gate's notify: a webhook URL or an e-mail
// address (exactly one is set). The engine records each notice; what
// sends it is given to flow (flow.Notifier).
type Notice struct {
	Webhook string
	Email   string
	Pos     Pos
}

// Branch is one arm of a parallel stage: stages run in order.
type Branch struct {
	ID        string
	Condition Expr
	Stages    []*Stage
	Pos       Pos
}

// Join says how many branches must succeed: all, any or N.
type Join struct {
	Mode string // JoinAll, JoinAny or JoinN
	N    int
	Pos  Pos
}

// The join modes.
const (
	JoinAll = "all"
	JoinAny = "any"
	JoinN   = "n"
)

// Poll ends a delay early once Condition holds, checked every Interval.
type Poll struct {
	Interval  time.Duration
	Condition Expr
}

// Request is a webhook's outbound call; strings may template.
type Request struct {
	Method  string
	URL     string
	Headers []Field
	Body    any
	Pos     Pos
}

// Expect is what a webhook's answer must be.
type Expect struct {
	Status []int // empty = any 2xx
	JSON   any   // a subset the answer's JSON must contain; nil = not checked
}

// Stage is one step of a workflow. Which fields apply depends on Type.
type Stage struct {
	ID   string
	Type StageType
	Pos  Pos

	// Any stage. Title is what pages and graphs call the stage ("" = its id).
	Title         string
	Condition     Expr
	SkipTo        Target
	Timeout       time.Duration
	OnError       *OnError
	OnComplete    Target
	MaxIterations Limit

	// Postconditions (skill, action, set) are checked against the run's
	// state with the stage's update applied, before it is committed; one
	// that is false fails the attempt, which follows on_error.
	Postconditions []Expr

	// skill and action. An action stage names a registered handler
	// (skill) or a built-in (Action: export, notify, snapshot,
	// start_workflow); Required makes a built-in's failure fail the
	// attempt instead of being recorded only.
	Skill    string
	Action   string
	Required bool
	With     []Field
	Outputs  []Output

	// set.
	Set []Field

	// gate. Form names a gate registered in Go whose own form asks the
	// person (the search's strategy and review); its options then route
	// the form's outcomes, labelled by their names.
	Form        string
	Conditions  []Expr
	Options     []Option
	Approval    *Approval
	ContextKeys []string
	OnPass      Target
	OnFail      *OnFail
	// OnTimeout applies when the gate has a Timeout (for a gate, how long
	// the person has); Notify is told when the gate asks, extends its
	// time and times out.
	OnTimeout *OnTimeout
	Notify    []Notice

	// parallel.
	Branches    []Branch
	ForEach     Expr
	Join        Join
	OnAnyReject Target
	OnAllReject Target

	// delay.
	Duration time.Duration
	Until    string
	Poll     *Poll

	// webhook.
	Request *Request
	Expect  *Expect

	keys  map[string]Pos // keys written, for checks that need a place
	exprs []exprRef
}

// at is where a key of the stage was written, or the stage itself when the
// key is absent (a problem about a missing key points at the stage).
func (s *Stage) at(key string) Pos {
	if p, ok := s.keys[key]; ok {
		return p
	}
	return s.Pos
}

// at is where a key of the approval was written, or the approval itself.
func (a *Approval) at(key string) Pos {
	if p, ok := a.keys[key]; ok {
		return p
	}
	return a.Pos
}
