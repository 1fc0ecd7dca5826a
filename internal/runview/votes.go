package runview

import (
	"slices"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/engine/flow"
)

// GateVotes is a gate checkpoint several people decide (a definition
// file's gate with approval), with every vote cast there, oldest first.
type GateVotes struct {
	CheckpointID string `json:"checkpoint_id"`
	Stage        string `json:"stage"`
	Iteration    int    `json:"iteration"`
	// Count, Of and Options are the gate's approval rule (Options the
	// passing ones).
	Count   int      `json:"count"`
	Of      int      `json:"of,omitempty"`
	Options []string `json:"options"`
	Decided bool     `json:"decided"`
	// Needed is how many more votes the closest passing option needs
	// while the gate waits (0 once decided); Waiting is how many expected
	// people have not voted (Of known, gate waiting).
	Needed  int `json:"needed"`
	Waiting int `json:"waiting"`
	// Expected are the people the gate names who have not voted yet
	// (gate waiting, voters named).
	Expected []string      `json:"expected,omitempty"`
	Votes    []engine.Vote `json:"votes"`
}

// GateVotesOf groups a run's votes by the gate checkpoint they were cast
// at; gates with approval and no vote yet are listed too.
func GateVotesOf(checkpoints []Checkpoint, votes []engine.Vote) ([]GateVotes, error) {
	var out []GateVotes
	for _, cd := range checkpoints {
		cp := cd.Checkpoint
		if cp.Kind != flow.KindGate {
			continue
		}
		p, err := engine.PayloadAs[flow.GatePayload](cp)
		if err != nil {
			return nil, err
		}
		if p.Approval == nil {
			continue
		}
		g := GateVotes{CheckpointID: cp.ID, Stage: p.Stage, Iteration: cp.Iteration, Count: p.Approval.Count, Of: p.Approval.Of,
			Options: p.Approval.Options, Decided: cd.Decision != nil || cp.Status != engine.CheckpointPending, Votes: []engine.Vote{}}
		var counted []engine.Vote
		for _, v := range votes {
			if v.CheckpointID != cp.ID {
				continue
			}
			g.Votes = append(g.Votes, v)
			if !v.Replaced && !v.Late {
				counted = append(counted, v)
			}
		}
		if !g.Decided {
			g.Needed = p.Approval.Rule(p.Options).Needed(counted)
			if g.Of > 0 {
				g.Waiting = max(g.Of-len(counted), 0)
			}
			g.Expected = notVoted(p.Approval.Voters, counted)
		}
		out = append(out, g)
	}
	return out, nil
}

// notVoted are the voters with no counted vote, in the gate's order.
func notVoted(voters []string, counted []engine.Vote) []string {
	var out []string
	for _, name := range voters {
		if !slices.ContainsFunc(counted, func(v engine.Vote) bool { return strings.EqualFold(v.Voter, name) }) {
			out = append(out, name)
		}
	}
	return out
}
