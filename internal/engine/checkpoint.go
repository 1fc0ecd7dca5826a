package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"quarry/internal/fault"
	"strings"
	"sync"
	"time"
)

// CheckpointKind names what a human is asked at a checkpoint. It is an open
// set: a workflow may define its own kinds.
type CheckpointKind string

// KindEscalation is the one kind the engine raises itself, when a step's
// retries are exhausted; its decision means approve = retry, edit = skip,
// reject = abort. Every other kind belongs to the workflow that asks it.
const KindEscalation CheckpointKind = "escalation"

// DecisionAction is what a human (or a programmatic handler) decided.
type DecisionAction string

// The three actions every checkpoint accepts.
const (
	Approve DecisionAction = "approve"
	Edit    DecisionAction = "edit"
	Reject  DecisionAction = "reject"
)

// DecisionActions lists every action, for validation and exhaustive tests.
func DecisionActions() []DecisionAction { return []DecisionAction{Approve, Edit, Reject} }

// Valid reports whether a is one of the three actions.
func (a DecisionAction) Valid() bool { return a == Approve || a == Edit || a == Reject }

// Payload is what a checkpoint shows. Every payload type names its kind, so
// a kind can never travel with another kind's payload.
type Payload interface {
	CheckpointKind() CheckpointKind
}

// RawPayload is a payload read back from storage before its gate decodes it
// with PayloadAs; it keeps its kind so decoding can check the pairing.
type RawPayload struct {
	Kind CheckpointKind
	JSON json.RawMessage
}

// CheckpointKind implements Payload.
func (r RawPayload) CheckpointKind() CheckpointKind { return r.Kind }

// MarshalJSON writes the stored JSON unchanged.
func (r RawPayload) MarshalJSON() ([]byte, error) {
	if len(r.JSON) == 0 {
		return []byte("null"), nil
	}
	return r.JSON, nil
}

// CheckpointStatus is a checkpoint's life cycle.
type CheckpointStatus string

// A checkpoint is pending until decided; expired when the run moved on
// without it (e.g. canceled).
const (
	CheckpointPending CheckpointStatus = "pending"
	CheckpointDecided CheckpointStatus = "decided"
	CheckpointExpired CheckpointStatus = "expired"
)

// Checkpoint is one question put to a human during a run.
type Checkpoint struct {
	ID        string
	RunID     string
	Step      string
	Kind      CheckpointKind
	Payload   Payload
	Iteration int
	// Timestamp is when the checkpoint was raised, UTC.
	Timestamp time.Time
	Status    CheckpointStatus
}

// NewCheckpoint builds a checkpoint, rejecting a payload of another kind.
// The timestamp is now (UTC, second precision so RFC 3339 round-trips).
func NewCheckpoint(kind CheckpointKind, payload Payload, runID string, iteration int, now time.Time) (Checkpoint, error) {
	if kind == "" {
		return Checkpoint{}, fault.Errorf(fault.EInvalid, "checkpoint kind is empty")
	}
	if payload == nil {
		return Checkpoint{}, fault.Errorf(fault.EInvalid, "checkpoint %q has no payload", kind)
	}
	if pk := payload.CheckpointKind(); pk != kind {
		return Checkpoint{}, fault.Errorf(fault.EInvalid, "checkpoint kind %q cannot carry a %q payload (%T)", kind, pk, payload)
	}
	if iteration < 0 {
		return Checkpoint{}, fault.Errorf(fault.EInvalid, "checkpoint iteration %d is negative", iteration)
	}
	if now.IsZero() {
		now = time.Now()
	}
	return Checkpoint{
		Kind: kind, Payload: payload, RunID: runID, Iteration: iteration,
		Timestamp: now.UTC().Truncate(time.Second), Status: CheckpointPending,
	}, nil
}

// TimestampRFC3339 is the timestamp as shown to people and APIs.
func (c Checkpoint) TimestampRFC3339() string { return c.Timestamp.UTC().Format(time.RFC3339) }

// PayloadAs returns the checkpoint's payload as T, decoding a stored payload
// and refusing a kind that T does not carry.
func PayloadAs[T Payload](c Checkpoint) (T, error) {
	var zero T
	switch p := c.Payload.(type) {
	case T:
		return p, nil
	case RawPayload:
		var out T
		if err := json.Unmarshal(p.JSON, &out); err != nil {
			return zero, fault.Errorf(fault.EInvalid, "checkpoint %s: payload is not a %T: %v", c.ID, zero, err)
		}
		if out.CheckpointKind() != c.Kind {
			return zero, fault.Errorf(fault.EInvalid, "checkpoint %s of kind %q cannot be read as %T (kind %q)", c.ID, c.Kind, zero, out.CheckpointKind())
		}
		return out, nil
	}
	return zero, fault.Errorf(fault.EInvalid, "checkpoint %s: payload is %T, not %T", c.ID, c.Payload, zero)
}

// Decision is the answer to a checkpoint.
type Decision struct {
	Action DecisionAction `json:"action"`
	// RevisedData carries the edited strategy, the feedback, … as JSON.
	RevisedData json.RawMessage `json:"revised_data,omitempty"`
	Note        string          `json:"note,omitempty"`
	DecidedBy   string          `json:"decided_by"`
}

// Validate checks the parts every decision needs.
func (d Decision) Validate() error {
	fe := fault.FieldErrors{}
	if !d.Action.Valid() {
		fe.Add("action", fmt.Sprintf("action must be approve, edit or reject, not %q", d.Action))
	}
	if strings.TrimSpace(d.DecidedBy) == "" {
		fe.Add("decided_by", "who decided is required")
	}
	if len(d.Note) > 10000 {
		fe.Add("note", "note is longer than 10,000 characters")
	}
	if len(d.RevisedData) > 0 && !json.Valid(d.RevisedData) {
		fe.Add("revised_data", "revised data is not valid JSON")
	}
	return fe.Err("invalid decision")
}

// DecisionRecord is a decision as stored: which checkpoint, and when.
type DecisionRecord struct {
	Decision
	CheckpointID string
	DecidedAt    time.Time
}

// ErrPending is returned by a CheckpointHandler that cannot answer now: the
// engine persists the checkpoint, marks the run waiting and returns.
var ErrPending = errors.New("engine: checkpoint pending")

// CheckpointHandler answers checkpoints. Programmatic handlers answer at
// once; the web app's handler answers ErrPending and a person decides later.
type CheckpointHandler interface {
	Handle(ctx context.Context, cp Checkpoint) (Decision, error)
}

// HandlerFunc adapts a function to CheckpointHandler.
type HandlerFunc func(ctx context.Context, cp Checkpoint) (Decision, error)

// Handle implements CheckpointHandler.
func (f HandlerFunc) Handle(ctx context.Context, cp Checkpoint) (Decision, error) { return f(ctx, cp) }

// AlwaysApprove approves every checkpoint at once.
func AlwaysApprove(by string) CheckpointHandler {
	return HandlerFunc(func(context.Context, Checkpoint) (Decision, error) {
		return Decision{Action: Approve, DecidedBy: by}, nil
	})
}

// Pending never answers: every checkpoint waits for a person.
func Pending() CheckpointHandler {
	return HandlerFunc(func(context.Context, Checkpoint) (Decision, error) { return Decision{}, ErrPending })
}

// Scripted answers checkpoints with the given decisions in order, then
// leaves the rest pending; tests and simulations use it.
func Scripted(decisions ...Decision) CheckpointHandler {
	var mu sync.Mutex
	next := 0
	return HandlerFunc(func(context.Context, Checkpoint) (Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(decisions) {
			return Decision{}, ErrPending
		}
		d := decisions[next]
		next++
		return d, nil
	})
}

// Gate turns a step into a human checkpoint. The workflow supplies how to
// build its payload and what each decision means; the engine does the rest.
type Gate struct {
	Kind CheckpointKind
	// Enabled reports whether the gate fires for this run; when it does not,
	// or the engine has no handler, the step takes the Auto decision.
	Enabled func(sc StepContext) bool
	// Payload builds what the human is shown.
	Payload func(ctx context.Context, sc StepContext) (Payload, error)
	// Validate checks a decision before it is recorded, so bad revised data
	// is refused at once (fault.EInvalid) and never reaches the run.
	Validate func(sc StepContext, cp Checkpoint, d Decision) error
	// Apply turns a recorded decision into an outcome and a state update.
	Apply func(ctx context.Context, sc StepContext, cp Checkpoint, d Decision) (Outcome, Update, error)
	// Auto is the outcome taken when the gate does not fire (default OK).
	Auto Outcome
	// Precheck, if set, runs at each visit before anyone is asked (after
	// Enabled, and even without a handler): when done it decides the gate
	// itself, taking outcome with update (a gate's automatic conditions
	// failing, say); otherwise update is committed with the checkpoint
	// (the conditions' results) and the person is asked. An error is a
	// failed attempt.
	Precheck func(ctx context.Context, sc StepContext) (outcome Outcome, update Update, done bool, err error)
	// Approval, if set, makes the gate wait for several people's votes
	// (Engine.Vote); nil: the first decision decides.
	Approval *Approval
	// Timeout, if set, bounds how long the gate waits for a person and
	// says whom to tell (GateTimeout).
	Timeout *GateTimeout
}

func (g *Gate) validate() error {
	switch {
	case g.Kind == "":
		return errors.New("gate has no checkpoint kind")
	case g.Payload == nil:
		return errors.New("gate has no payload builder")
	case g.Apply == nil:
		return errors.New("gate has no decision applier")
	case g.Timeout != nil && g.Timeout.Default != "" && g.Timeout.Choose == nil:
		return errors.New("gate's timeout has a default but no way to choose it")
	}
	return nil
}

// EscalationPayload is shown when a step failed every attempt, or (Reason
// EscalationResume) when a restart found it waiting to retry and its
// retry policy asks a person first (RetryPolicy.AskToResume).
type EscalationPayload struct {
	Step     string `json:"step"`
	Error    string `json:"error"`
	Attempts int    `json:"attempts"`
	// Reason is "" for attempts used up, EscalationResume for a retry
	// that waits for a person's word after a restart.
	Reason string `json:"reason,omitempty"`
	// MaxAttempts is the step's bound on attempts (with Reason resume:
	// how many remain is MaxAttempts - Attempts).
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// EscalationResume is the reason of an escalation raised after a restart
// for a step that was waiting out its backoff: approve resumes it (the
// retry runs, its attempts counted on), edit skips it, reject cancels.
const EscalationResume = "resume"

// CheckpointKind implements Payload.
func (EscalationPayload) CheckpointKind() CheckpointKind { return KindEscalation }
