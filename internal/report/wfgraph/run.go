package wfgraph

import (
	"fmt"
	"strconv"
	"strings"

	"quarry/internal/engine"
)

// ForRun highlights g with where a run stands: stages are engine.Progress's
// (as GET /api/runs/:id lists them), current the stage the run is at. Each
// stage's node takes its state, and a parallel stage's branches colour the
// nodes of their clusters (a branch's stages all take the branch's state:
// the run records a branch's state, not which of its stages runs):
//
//   - A named branch's stages take its run branch's state.
//   - A for_each branch's stages take its items' states (run branches
//     <branch>-1, <branch>-2, …) folded into one: running when any item
//     runs, else failed when any failed, else pending when any waits to
//     start, else completed when any completed (the others skipped or
//     canceled), else canceled when any was, else skipped. Its cluster's
//     label says how many items are done ("2 of 3 done, 1 failed").
//   - Before the stage runs in the run's current iteration (pending), its
//     branches are pending whatever an earlier visit left, and skipped with
//     the stage; a stage that ran without a branch of this cluster (an
//     empty for_each list) leaves them skipped when it completed.
//   - The join takes the stage's state once the stage has ended
//     (completed, failed or skipped) and is pending before.
//
// A graph drawn from a Go workflow has no branch clusters: only its stages
// are coloured.
func ForRun(g Graph, stages []engine.StageState, current string) Options {
	o := Options{Current: current, States: map[string]State{}, Notes: map[string]string{}}
	for _, s := range stages {
		o.States[s.ID] = State(s.State)
	}
	for _, s := range stages {
		if s.Type != "parallel" {
			continue
		}
		st := State(s.State)
		switch st {
		case Completed, Failed, Skipped:
			o.States[s.ID+".join"] = st
		default:
			o.States[s.ID+".join"] = Pending
		}
		for _, c := range g.Clusters {
			if c.Parent != s.ID || c.Kind != KindBranch {
				continue
			}
			var items []State
			for _, b := range s.Branches {
				if b.ID == c.Branch || c.ForEach && isItem(b.ID, c.Branch) {
					items = append(items, State(b.State))
				}
			}
			bst := branchState(st, items)
			for _, n := range g.Nodes {
				if n.Cluster == c.ID {
					o.States[n.ID] = bst
				}
			}
			if c.ForEach && st != Pending && st != Skipped && len(items) > 0 {
				o.Notes[c.ID] = itemsNote(items)
			}
		}
	}
	return o
}

// isItem reports whether id is a for_each item of branch: <branch>-<n>.
func isItem(id, branch string) bool {
	n, ok := strings.CutPrefix(id, branch+"-")
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// branchState is a branch cluster's state from its parallel stage's state
// and its run branches' (see ForRun).
func branchState(stage State, items []State) State {
	switch {
	case stage == Pending || stage == "":
		return Pending
	case stage == Skipped:
		return Skipped
	case len(items) == 0 && stage == Completed:
		return Skipped
	case len(items) == 0:
		return Pending
	}
	count := map[State]int{}
	for _, it := range items {
		count[it]++
	}
	for _, st := range []State{Running, Failed, Pending, Completed, Canceled} {
		if count[st] > 0 {
			return st
		}
	}
	return Skipped
}

// itemsNote counts a for_each branch's items for its cluster's label.
func itemsNote(items []State) string {
	count := map[State]int{}
	for _, it := range items {
		count[it]++
	}
	note := fmt.Sprintf("%d of %d done", count[Completed], len(items))
	for _, st := range []State{Failed, Canceled, Skipped} {
		if count[st] > 0 {
			note += fmt.Sprintf(", %d %s", count[st], st)
		}
	}
	return note
}
