package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"quarry/internal/fault"
)

// Approval is a gate's rule for several people: it passes when Count
// distinct people's current votes name the same passing option, and it
// fails as soon as it can no longer pass (Tally says exactly when).
type Approval struct {
	// Count is how many distinct people must choose the same option.
	Count int
	// Of is how many people are expected to vote (0: not known). Knowing
	// it lets the gate fail early, once the voters left cannot make any
	// passing option reach Count.
	Of int
	// Voters, when set, are the only people who may vote (names compared
	// without case); Of is their number.
	Voters []string
	// From, when set, is the least role in the run's project a voter must
	// hold (Config.Roles says who holds what); NoSelf refuses the vote of
	// the person who started the run (Run.StartedBy).
	From   string
	NoSelf bool
	// Pass are the passing options' labels; Fail the gate's other
	// options, in the gate's order (the gate takes one when it fails).
	Pass, Fail []string
	// Choice reads the option and input a decision votes for.
	Choice func(d Decision) (option, input string)
	// Decision builds the decision that resolves the gate with option.
	Decision func(option, input, by, note string) Decision
}

// Vote is one person's vote at a gate. A person's later vote replaces
// their earlier one (Replaced), until the gate resolves; a vote arriving
// after it resolved is kept too (Late) but counts for nothing.
type Vote struct {
	Seq          int64     `json:"seq"`
	RunID        string    `json:"run_id"`
	CheckpointID string    `json:"checkpoint_id"`
	Voter        string    `json:"voter"`
	Option       string    `json:"option"`
	Input        string    `json:"input,omitempty"`
	Note         string    `json:"note,omitempty"`
	VotedAt      time.Time `json:"voted_at"`
	Replaced     bool      `json:"replaced"`
	Late         bool      `json:"late,omitempty"`
}

// Ballot is what a vote achieved: the gate's counted votes after it, and
// the decision when this vote resolved the gate.
type Ballot struct {
	Votes    []Vote          `json:"votes"`
	Decision *DecisionRecord `json:"-"`
	// Needed is how many more votes the closest passing option needs (0
	// once resolved).
	Needed int `json:"needed"`
}

// Resolved reports whether the vote decided the gate.
func (b Ballot) Resolved() bool { return b.Decision != nil }

// Tally applies the rule to the counted votes (one per person, the
// latest). The gate resolves at the first of:
//   - a passing option has Count votes: the gate takes it;
//   - a failing option has Count votes: the gate takes it (it fails);
//   - Of is set and no passing option can still reach Count with the
//     people who have not voted (its votes + Of − voters < Count): the
//     gate fails, taking the failing option with the most votes (the
//     first in the gate's order on a tie, or when none has any).
func (a Approval) Tally(votes []Vote) (option string, resolved bool) {
	n := map[string]int{}
	for _, v := range votes {
		n[v.Option]++
	}
	for _, o := range a.Pass {
		if n[o] >= a.Count {
			return o, true
		}
	}
	for _, o := range a.Fail {
		if n[o] >= a.Count {
			return o, true
		}
	}
	if a.Of > 0 {
		left := max(a.Of-len(votes), 0)
		for _, o := range a.Pass {
			if n[o]+left >= a.Count {
				return "", false
			}
		}
		best := ""
		for _, o := range a.Fail {
			if best == "" || n[o] > n[best] {
				best = o
			}
		}
		return best, best != ""
	}
	return "", false
}

// Needed is how many more votes the passing option closest to Count needs.
func (a Approval) Needed(votes []Vote) int {
	n := map[string]int{}
	for _, v := range votes {
		n[v.Option]++
	}
	need := a.Count
	for _, o := range a.Pass {
		need = min(need, max(a.Count-n[o], 0))
	}
	return need
}

// resolve builds the decision that resolves the gate from its counted
// votes, or nil while it waits: by the people who chose the option taken,
// with their inputs.
func (a Approval) resolve(votes []Vote, at time.Time) *DecisionRecord {
	option, ok := a.Tally(votes)
	if !ok {
		return nil
	}
	var by, inputs []string
	for _, v := range votes {
		if v.Option == option {
			by = append(by, v.Voter)
			if s := strings.TrimSpace(v.Input); s != "" {
				inputs = append(inputs, s)
			}
		}
	}
	who := strings.Join(by, ", ")
	if who == "" {
		// Failed with no vote for the failing option it takes: say so,
		// which is also the input that option may require.
		who = "nobody"
		inputs = []string{"no vote: the gate could no longer pass"}
	}
	note := fmt.Sprintf("%d of %d votes for %q", len(by), len(votes), option)
	if a.Of > 0 {
		note += fmt.Sprintf(" (%d expected, %d needed)", a.Of, a.Count)
	} else {
		note += fmt.Sprintf(" (%d needed)", a.Count)
	}
	d := a.Decision(option, strings.Join(inputs, "\n"), who, note)
	return &DecisionRecord{Decision: d, CheckpointID: "", DecidedAt: at}
}

// VoteStore is the persistence several-person gates need.
type VoteStore interface {
	// Vote records v (replacing the voter's earlier vote at the
	// checkpoint) and, in the same transaction, calls resolve with the
	// checkpoint's counted votes: a decision it returns is recorded and
	// the run's advance scheduled as Store.Decide does, so of any number
	// of racing votes exactly one resolves the gate. A vote on a decided
	// checkpoint is kept as late and answered fault.EConflict.
	Vote(ctx context.Context, v Vote, resolve func([]Vote) *DecisionRecord) (Ballot, error)
}

// Vote records a person's vote at a pending checkpoint. At a gate without
// an Approval it is Decide (the ballot resolved). At one with, the vote
// is validated like a decision, recorded, and resolves the gate when the
// rule says so: the decision then names the people who chose the option
// taken, and the run resumes as after Decide. (A programmatic
// CheckpointHandler still answers such a gate with one decision: tests
// and simulations have no people.)
func (e *Engine) Vote(ctx context.Context, runID, checkpointID string, d Decision) (Ballot, error) {
	if err := d.Validate(); err != nil {
		return Ballot{}, err
	}
	run, err := e.cfg.Store.Run(ctx, runID)
	if err != nil {
		return Ballot{}, err
	}
	cp, _, err := e.cfg.Store.Checkpoint(ctx, checkpointID)
	if err != nil {
		return Ballot{}, err
	}
	if cp.RunID != runID {
		return Ballot{}, fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", runID, checkpointID)
	}
	wf, err := e.Workflow(ctx, run)
	if err != nil {
		return Ballot{}, err
	}
	step, ok := wf.Step(cp.Step)
	if !ok || step.Gate == nil || step.Gate.Approval == nil || cp.Kind != step.Gate.Kind {
		if err := e.Decide(ctx, runID, checkpointID, d); err != nil {
			return Ballot{}, err
		}
		_, rec, err := e.cfg.Store.Checkpoint(ctx, checkpointID)
		return Ballot{Decision: rec}, err
	}
	a := step.Gate.Approval
	if d.Action != Approve {
		return Ballot{}, fault.Errorf(fault.EInvalid, "a vote chooses one of the gate's options (approve), not %s", d.Action)
	}
	// Validated even when late, so the table holds no vote for an option
	// the gate does not have.
	if err := e.validateDecision(step, e.stepContext(run, step.ID), cp, d); err != nil {
		return Ballot{}, err
	}
	vs, ok := e.cfg.Store.(VoteStore)
	if !ok {
		return Ballot{}, errors.New("engine: this store cannot record votes")
	}
	if err := a.mayVote(d.DecidedBy); err != nil {
		return Ballot{}, err
	}
	if err := e.mayApprove(ctx, *a, run, d.DecidedBy); err != nil {
		return Ballot{}, err
	}
	option, input := a.Choice(d)
	now := e.cfg.Now().UTC()
	v := Vote{RunID: runID, CheckpointID: cp.ID, Voter: strings.TrimSpace(d.DecidedBy), Option: option, Input: input, Note: d.Note, VotedAt: now}
	b, err := vs.Vote(ctx, v, func(votes []Vote) *DecisionRecord {
		r := a.resolve(votes, now)
		if r != nil {
			r.CheckpointID = cp.ID
		}
		return r
	})
	if err != nil {
		return b, err
	}
	if b.Resolved() {
		if o := e.cfg.Observer; o != nil {
			o.Decided(run.Workflow, cp.Kind, b.Decision.Action)
		}
		e.publish(Event{Type: EventDecision, RunID: runID, Step: cp.Step, Kind: cp.Kind, Message: "decided by the votes of " + b.Decision.DecidedBy})
		e.wake(ctx)
		return b, nil
	}
	b.Needed = a.Needed(b.Votes)
	e.publish(Event{Type: EventDecision, RunID: runID, Step: cp.Step, Kind: cp.Kind, Message: fmt.Sprintf("%s voted %q", v.Voter, option)})
	return b, nil
}

// mayApprove refuses a vote from the run's starter when the gate wants
// someone else (NoSelf), and from someone without the gate's role in the
// run's project (From). A run in no project (open mode) has no roles to
// check: From then lets anyone vote.
func (e *Engine) mayApprove(ctx context.Context, a Approval, run Run, voter string) error {
	voter = strings.TrimSpace(voter)
	if a.NoSelf && run.StartedBy != "" && strings.EqualFold(voter, run.StartedBy) {
		return fault.Errorf(fault.EUnauthorized, "%s started this run, and this gate needs someone else's approval (no self-approval)", voter)
	}
	if a.From == "" || run.Project == "" || e.cfg.Roles == nil {
		return nil
	}
	ok, err := e.cfg.Roles(ctx, run.Project, voter, a.From)
	if err != nil {
		return err
	}
	if !ok {
		return fault.Errorf(fault.EUnauthorized, "only the project's %ss may vote at this gate", a.From)
	}
	return nil
}

// mayVote refuses a vote from someone the gate does not name, when it
// names its voters (fault.EUnauthorized).
func (a Approval) mayVote(voter string) error {
	if len(a.Voters) == 0 || slices.ContainsFunc(a.Voters, func(v string) bool { return strings.EqualFold(v, strings.TrimSpace(voter)) }) {
		return nil
	}
	return fault.Errorf(fault.EUnauthorized, "%q may not vote at this gate: only %s do", strings.TrimSpace(voter), strings.Join(a.Voters, ", "))
}
