package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"quarry/internal/fault"
	"time"
)

// Status is where a run is in its life cycle:
// pending → running → waiting ⇄ running → completed | failed | escalated | canceled,
// and escalated → running when a person decides to retry or skip.
type Status string

// The run statuses.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusWaiting   Status = "waiting"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusEscalated Status = "escalated"
	StatusCanceled  Status = "canceled"
)

// Statuses lists every status.
func Statuses() []Status {
	return []Status{StatusPending, StatusRunning, StatusWaiting, StatusCompleted, StatusFailed, StatusEscalated, StatusCanceled}
}

// IsComplete reports whether the run has ended for good.
func (s Status) IsComplete() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCanceled
}

// State is the data steps pass to each other, one JSON value per key, so a
// run's state can be stored and resumed without knowing its Go types.
type State map[string]json.RawMessage

// Update is the keys a step changes; it is merged into the run's State.
type Update = State

// Set stores v (as JSON) under key, creating the map if needed.
func (s *State) Set(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("engine: state %q: %w", key, err)
	}
	if *s == nil {
		*s = State{}
	}
	(*s)[key] = b
	return nil
}

// Get decodes the value under key into T; ok is false when the key is absent.
func Get[T any](s State, key string) (v T, ok bool, err error) {
	raw, found := s[key]
	if !found {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, true, fault.Errorf(fault.EInternal, "state %q: %v", key, err)
	}
	return v, true, nil
}

// NewUpdate builds an Update from key/value pairs.
func NewUpdate(kv map[string]any) (Update, error) {
	u := Update{}
	for k, v := range kv {
		if err := u.Set(k, v); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (s State) merge(u Update) State {
	out := maps.Clone(s)
	if out == nil {
		out = State{}
	}
	maps.Copy(out, u)
	return out
}

// Run is one execution of a workflow.
type Run struct {
	ID       string
	Workflow string
	Params   Params
	State    State
	// Step is the step to execute next ("" once the run has ended).
	Step   string
	Status Status
	// Iteration starts at 1 and grows by one per Iterate transition.
	Iteration int
	// Attempt counts failed attempts of the current step.
	Attempt int
	// CheckpointID is the checkpoint the run is stopped at, if any.
	CheckpointID string
	// Version grows by one at every committed change (optimistic locking).
	Version   int64
	Error     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Source is the definition text a new run starts from (its workflow's
	// Source); CreateRun stores it by hash with the run. It is not read
	// back: the run's state names the hash it runs.
	Source *Source
	// Project is the team project the run belongs to ("" for none: an
	// installation without accounts, or a run a trigger started). The
	// engine does not read it; children and forks inherit it, so a
	// project's runs stay together.
	Project string
	// StartedBy is who started the run ("" when nobody said: a trigger, a
	// script in open mode); children inherit it, a fork is the forker's.
	// A gate whose approval refuses self-approval refuses it.
	StartedBy string
	// Parent is set on a run a step started (StartChild); CreateRun and
	// Commit store it, and a child's last commit wakes a waiting parent.
	// It is not read back by Store.Run.
	Parent *Parent
}

// IsComplete reports whether the run has ended for good.
func (r Run) IsComplete() bool { return r.Status.IsComplete() }

// StepRecord is one line of a run's audit trail: a step attempt, a gate
// passed, or an engine transition (escalation, abort).
type StepRecord struct {
	RunID     string
	Step      string
	Iteration int
	Attempt   int
	// MaxAttempts is the step's retry policy's bound on attempts (0 when
	// the record is not of a step's attempt, or was written before it
	// was kept).
	MaxAttempts int
	Outcome     string
	Error       string
	StartedAt   time.Time
	FinishedAt  time.Time
	Output      json.RawMessage
	// OutputSize is the output's size in bytes when a read left a large
	// output out (Output nil); 0 otherwise.
	OutputSize int
}

// Duration is how long the attempt took.
func (r StepRecord) Duration() time.Duration { return r.FinishedAt.Sub(r.StartedAt) }

// Commit is everything one step transition writes, applied atomically by the
// Store: the audit record, the run's new position and state, and any
// checkpoint or decision the transition raised or consumed.
type Commit struct {
	// Run holds the new values; Run.Version is the version read, and the
	// store refuses the commit (fault.EConflict) if the run changed since.
	Run Run
	// From is the status read with Run.Version. When the status does not
	// change the store leaves the status index alone: one page less to
	// write on every step of a running run.
	From Status
	// Step is the audit record (nil for pure status changes).
	Step *StepRecord
	// NewCheckpoint is inserted (with its status) when not nil.
	NewCheckpoint *Checkpoint
	// Decision is recorded for NewCheckpoint when a programmatic handler
	// answered at once.
	Decision *DecisionRecord
	// ResolveCheckpoint marks the given checkpoint as no longer current
	// (expired if it was still pending).
	ResolveCheckpoint string
	// WakeAt, when set, schedules an advance of the run at that time in
	// the same transaction (a run waiting on a timer).
	WakeAt time.Time
	// Branches are a parallel step's new branches: inserted with Fan set
	// to the seq this commit produces, each with its job.
	Branches []Branch
	// EndBranches cancels the run's open branches (the join decided, or
	// the run was canceled).
	EndBranches bool
	// Checks are the gate checks the visit made, recorded with Step.
	Checks []GateCheck
	// ReadBacks are the step's read-back postconditions, checked by the
	// store last inside the transaction (CheckReadBacks) against Update,
	// what the step wrote.
	ReadBacks []ReadBack
	Update    Update
	// Timer is a gate timer to store (a new one with its checkpoint, an
	// extended or fired one): pending, its job is scheduled for its Due
	// in the same transaction. Notices are recorded with it.
	Timer   *GateTimer
	Notices []Notice
	// A Decision without NewCheckpoint (a timer's) decides the run's
	// pending checkpoint: the commit fails with fault.EConflict if it
	// was decided already.
	// Child is a sub-workflow run the step started (Run.Parent set):
	// inserted pending, with its job, in the same transaction.
	Child *Run
}
