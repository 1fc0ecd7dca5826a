package flow_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// votesDef is a 2-of-3 sign-off: Approve passes, Reject and Revise fail.
const votesDef = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: signoff}
stages:
  - id: signoff
    type: gate
    options:
      - {label: Approve, next: publish}
      - {label: Reject, next: complete}
      - {label: Revise, next: complete, requires_input: true}
    approval: {count: 2, of: 3, options: [Approve]}
  - id: publish
    type: skill
    skill: echo
    with: {by: "{{ outputs.signoff.decided_by }}"}
`

func votesBundle(t *testing.T) (*bundle, *counter, engine.Run, engine.Checkpoint) {
	t.Helper()
	c := &counter{}
	b := setup(t, "", engine.Pending(), compile(t, votesDef, flow.Skills{"echo": echo(c)}))
	r := b.run(t, "signoff", nil)
	cp, p := pendingCheckpoint(t, b, r)
	require.Equal(t, &flow.GateApproval{Count: 2, Of: 3, Options: []string{"Approve"}}, p.Approval)
	return b, c, r, cp
}

func TestGateApprovalPassesOnCountVotes(t *testing.T) {
	t.Parallel()
	b, c, r, cp := votesBundle(t)
	ctx := context.Background()
	bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "ada"))
	require.NoError(t, err)
	require.False(t, bal.Resolved())
	require.Equal(t, 1, bal.Needed)
	// Decide is a vote too at such a gate; a vote is validated like a decision.
	require.Equal(t, fault.EInvalid, fault.ErrorCode(b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Revise", "", "bob"))))
	require.NoError(t, b.eng.Decide(ctx, r.ID, cp.ID, flow.Choose("Reject", "", "bob")))
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusWaiting, r.Status, "two votes, different options: still waiting")
	bal, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "cy"))
	require.NoError(t, err)
	require.True(t, bal.Resolved())
	require.Equal(t, "ada, cy", bal.Decision.DecidedBy)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, "ada, cy", outputsOf(t, r)["signoff"]["decided_by"])
	require.Equal(t, 1, c.get("publish"))
	// A vote after the gate resolved is kept, marked late, and refused.
	_, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Reject", "", "dee"))
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	votes, err := b.store.Votes(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, votes, 4)
	require.True(t, votes[3].Late)
}

func TestGateApprovalRevoteReplaces(t *testing.T) {
	t.Parallel()
	b, _, r, cp := votesBundle(t)
	ctx := context.Background()
	_, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "ada"))
	require.NoError(t, err)
	// ada changes her mind: her Approve no longer counts, so bob's
	// Approve does not make two.
	bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Revise", "tighten the query", "ada"))
	require.NoError(t, err)
	require.Len(t, bal.Votes, 1)
	bal, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "bob"))
	require.NoError(t, err)
	require.False(t, bal.Resolved())
	votes, err := b.store.Votes(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, votes, 3)
	require.Equal(t, []bool{true, false, false}, []bool{votes[0].Replaced, votes[1].Replaced, votes[2].Replaced})
	require.Equal(t, "tighten the query", votes[1].Input)
	// ada again, Approve: now two people chose it.
	bal, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "ada"))
	require.NoError(t, err)
	require.True(t, bal.Resolved())
	require.Equal(t, "bob, ada", bal.Decision.DecidedBy)
}

// With three people expected, the gate waits while Approve can still
// reach two votes and fails as soon as it cannot, taking the failing
// option with the most votes (the first in the file on a tie).
func TestGateApprovalFailsOnceItCannotPass(t *testing.T) {
	t.Parallel()
	b, c, r, cp := votesBundle(t)
	ctx := context.Background()
	_, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "ada"))
	require.NoError(t, err)
	bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Revise", "more sources", "bob"))
	require.NoError(t, err)
	require.False(t, bal.Resolved(), "Approve has 1 and cy may still vote")
	require.Equal(t, 1, bal.Needed)
	bal, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Reject", "", "cy"))
	require.NoError(t, err)
	require.True(t, bal.Resolved(), "Approve has 1, nobody is left: it cannot pass")
	require.Equal(t, "cy", bal.Decision.DecidedBy, "Reject and Revise tie: Reject comes first")
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, "Reject", outputsOf(t, r)["signoff"]["option"])
	require.Zero(t, c.get("publish"))
}

// 100 votes at once, from 100 people, on the 2-of-3 gate: exactly one
// decision, the run advances once, and every vote is in the table.
func TestGateApprovalConcurrentVotes(t *testing.T) {
	t.Parallel()
	b, c, r, cp := votesBundle(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	resolved, conflicts := 0, 0
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", fmt.Sprintf("voter%02d", i)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && bal.Resolved():
				resolved++
			case fault.ErrorCode(err) == fault.EConflict:
				conflicts++
			default:
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, resolved)
	require.Equal(t, 98, conflicts)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 1, c.get("publish"))
	require.Equal(t, []string{"signoff:checkpoint", "signoff:goto:publish", "publish:ok"}, b.steps(t, r.ID))
	votes, err := b.store.Votes(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, votes, 100)
	late := 0
	for _, v := range votes {
		if v.Late {
			late++
		}
	}
	require.Equal(t, 98, late)
}

// A gate that fails with no vote for any failing option takes the first
// one, even when it requires input: the decision says why instead.
func TestGateApprovalFailsWithoutFailingVotes(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, "", engine.Pending(), compile(t, `apiVersion: quarry/v1
kind: Workflow
metadata: {name: split}
stages:
  - id: pick
    type: gate
    options:
      - {label: Short, next: write}
      - {label: Long, next: write}
      - {label: Rethink, next: complete, requires_input: true}
    approval: {count: 2, of: 2, options: [Short, Long]}
  - {id: write, type: skill, skill: echo}
`, flow.Skills{"echo": echo(c)}))
	ctx := context.Background()
	r := b.run(t, "split", nil)
	cp, _ := pendingCheckpoint(t, b, r)
	_, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Short", "", "ada"))
	require.NoError(t, err)
	bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Long", "", "bob"))
	require.NoError(t, err)
	require.True(t, bal.Resolved(), "both voted, each option has one of the two needed")
	require.Equal(t, "nobody", bal.Decision.DecidedBy)
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, "Rethink", outputsOf(t, r)["pick"]["option"])
	require.Equal(t, "no vote: the gate could no longer pass", outputsOf(t, r)["pick"]["input"])
	require.Zero(t, c.get("write"))
}

// quorumDef gives the gate's options inside approval: every option passes
// once two people choose it (the shape ../shared/checks/wf/quorum.yaml
// uses).
const quorumDef = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: quorum}
stages:
  - id: vote
    type: gate
    approval:
      count: 2
      options:
        - {label: Accept, next: accepted}
        - {label: Reject, next: complete}
  - {id: accepted, type: skill, skill: echo}
`

func TestGateApprovalWithItsOptionsInside(t *testing.T) {
	t.Parallel()
	c := &counter{}
	b := setup(t, "", engine.Pending(), compile(t, quorumDef, flow.Skills{"echo": echo(c)}))
	r := b.run(t, "quorum", nil)
	cp, p := pendingCheckpoint(t, b, r)
	require.Equal(t, []string{"Accept", "Reject"}, []string{p.Options[0].Label, p.Options[1].Label})
	ctx := context.Background()
	for _, v := range []struct{ who, opt string }{{"ana", "Accept"}, {"ben", "Reject"}} {
		bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose(v.opt, "", v.who))
		require.NoError(t, err)
		require.False(t, bal.Resolved(), "one vote each: still waiting")
	}
	bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Accept", "", "cem"))
	require.NoError(t, err)
	require.True(t, bal.Resolved())
	r = b.advance(t, r.ID)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, 1, c.get("accepted"))
	require.Equal(t, "ana, cem", outputsOf(t, r)["vote"]["decided_by"])
}

// namedVotersDef is a 2-of-3 sign-off by three named people.
const namedVotersDef = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: named}
stages:
  - id: signoff
    type: gate
    options:
      - {label: Approve, next: complete}
      - {label: Reject, next: complete}
    approval: {count: 2, voters: [Ada, Bob, Cy], options: [Approve]}
`

// TestGateApprovalNamedVoters: a gate that names its voters counts them
// as expected (of), refuses anyone else (nothing recorded), matches names
// without case.
func TestGateApprovalNamedVoters(t *testing.T) {
	t.Parallel()
	b := setup(t, "", engine.Pending(), compile(t, namedVotersDef, flow.Skills{}))
	r := b.run(t, "named", nil)
	cp, p := pendingCheckpoint(t, b, r)
	require.Equal(t, &flow.GateApproval{Count: 2, Of: 3, Voters: []string{"Ada", "Bob", "Cy"}, Options: []string{"Approve"}}, p.Approval)
	ctx := context.Background()
	_, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "Eve"))
	require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err))
	require.ErrorContains(t, err, "only Ada, Bob, Cy")
	bal, err := b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Reject", "", "ada"))
	require.NoError(t, err)
	require.False(t, bal.Resolved())
	bal, err = b.eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Reject", "", " BOB "))
	require.NoError(t, err)
	require.True(t, bal.Resolved(), "two of the three named chose Reject")
	votes, err := b.store.Votes(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, votes, 2, "Eve's refused vote is not recorded")
}

// reviewersDef is a 2-vote sign-off by the project's reviewers, not by
// whoever started the run.
const reviewersDef = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: peers}
stages:
  - id: signoff
    type: gate
    options:
      - {label: Approve, next: complete}
      - {label: Reject, next: complete}
    approval: {count: 2, from: reviewers, self_approval: false, options: [Approve]}
`

// TestGateApprovalFromARoleNotSelf: a gate asking for reviewers takes the
// votes of the run's project's reviewers and owners only, and never the
// vote of the person who started the run; refused votes are not
// recorded. The roles come from Config.Roles (the store's memberships in
// the app).
func TestGateApprovalFromARoleNotSelf(t *testing.T) {
	t.Parallel()
	roles := map[string]string{"ada": "owner", "bob": "reviewer", "cy": "reviewer", "vi": "viewer"}
	st, err := store.Open(context.Background(), storetest.DSN(t, &pg, filepath.Join(t.TempDir(), "q.db")), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	reg, err := engine.NewRegistry(compile(t, reviewersDef, flow.Skills{}))
	require.NoError(t, err)
	var asked []string
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: engine.Pending(),
		Roles: func(_ context.Context, project, person, role string) (bool, error) {
			asked = append(asked, project)
			have := roles[strings.ToLower(person)]
			return have == "owner" || (have == "reviewer" && role == "reviewer"), nil
		}})
	require.NoError(t, err)
	ctx := context.Background()
	r, err := eng.StartAs(ctx, engine.Starter{Project: "p1", By: "Ada"}, "peers", nil)
	require.NoError(t, err)
	require.NoError(t, eng.Advance(ctx, r.ID))
	r, err = st.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, "Ada", r.StartedBy)
	cp, p := pendingCheckpoint(t, &bundle{store: st, eng: eng}, r)
	require.Equal(t, &flow.GateApproval{Count: 2, From: "reviewer", NoSelf: true, Options: []string{"Approve"}}, p.Approval)

	_, err = eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "ada"))
	require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err))
	require.ErrorContains(t, err, "no self-approval")
	_, err = eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "Vi"))
	require.Equal(t, fault.EUnauthorized, fault.ErrorCode(err))
	require.ErrorContains(t, err, "only the project's reviewers")
	bal, err := eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "Bob"))
	require.NoError(t, err)
	require.False(t, bal.Resolved())
	bal, err = eng.Vote(ctx, r.ID, cp.ID, flow.Choose("Approve", "", "Cy"))
	require.NoError(t, err)
	require.True(t, bal.Resolved(), "two reviewers approved")
	votes, err := st.Votes(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, votes, 2, "the refused votes are not recorded")
	require.Contains(t, asked, "p1", "roles are asked in the run's project")
}
