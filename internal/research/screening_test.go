package research_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/research"
)

// ev is a mark event made i-th.
func ev(i int, paper, by, mark string) research.Mark {
	return research.Mark{PaperID: paper, By: by, Mark: mark, At: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)}
}

func resolution(i int, paper, by, mark string) research.Mark {
	m := ev(i, paper, by, mark)
	m.Resolves = true
	return m
}

func statuses(vs []research.Verdict) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.PaperID] = v.Status
	}
	return out
}

func TestScreenDual(t *testing.T) {
	t.Parallel()
	plan := research.ScreeningPlan{Reviewers: 2, Resolver: research.ResolveByThird}
	events := []research.Mark{
		ev(1, "p1", "Ada", "relevant"),
		ev(2, "p2", "Ada", "relevant"),
		ev(3, "p2", "bob", "relevant"), // names compare without case
		ev(4, "p3", "Ada", "relevant"),
		ev(5, "p3", "Bob", "irrelevant"),
		ev(6, "p4", "Ada", "irrelevant"),
		ev(7, "p4", "Bob", "relevant"),
		resolution(8, "p4", "Cy", "irrelevant"),
		ev(9, "p1", "ada", "irrelevant"), // Ada changes her own mark: still one reviewer
	}
	vs := research.Screen(plan, events)
	require.Equal(t, map[string]string{"p1": research.VerdictPending, "p2": research.VerdictAgreed,
		"p3": research.VerdictConflict, "p4": research.VerdictResolved}, statuses(vs))
	counting := research.Counting(plan, events)
	require.Len(t, counting, 2)
	require.Equal(t, "p2", counting[0].PaperID)
	require.Equal(t, "relevant", counting[0].Mark)
	require.Equal(t, "p4", counting[1].PaperID)
	require.Equal(t, "irrelevant", counting[1].Mark)
	require.True(t, counting[1].Resolves)

	// Blind: Bob sees his own marks, and everyone's on complete papers
	// only; Ada's mark of p1 (pending) is hidden from him.
	for _, m := range research.Visible(plan, "BOB", events) {
		if m.PaperID == "p1" {
			t.Fatalf("Bob sees %s's mark of the pending paper p1", m.By)
		}
	}
	require.Len(t, research.Visible(plan, "Ada", events), len(events), "every paper Ada screened is complete or hers")
	require.Len(t, research.Visible(plan, "Cy", events), len(events)-2, "a third person sees completed papers only")

	conflict := vs[2]
	require.True(t, research.MayResolve(plan, conflict, "Cy"))
	require.False(t, research.MayResolve(plan, conflict, "ada"), "a third person resolves")
	require.True(t, research.MayResolve(research.ScreeningPlan{Reviewers: 2, Resolver: research.ResolveByPair}, conflict, "Ada"))
}

func TestCountingSingleIsTheLatestMark(t *testing.T) {
	t.Parallel()
	events := []research.Mark{ev(1, "p1", "Ada", "relevant"), ev(2, "p2", "Bob", "unsure"), ev(3, "p1", "Bob", "irrelevant")}
	got := research.Counting(research.ScreeningPlan{Reviewers: 1}, events)
	require.Equal(t, []research.Mark{events[1], events[2]}, got)
	require.Equal(t, events, research.Visible(research.ScreeningPlan{}, "Ada", events), "single screening hides nothing")
}

func TestAgreements(t *testing.T) {
	t.Parallel()
	// Ada and Bob over 4 papers: 3 agree; Cy screened nothing with Bob.
	events := []research.Mark{
		ev(1, "p1", "Ada", "relevant"), ev(2, "p1", "Bob", "relevant"),
		ev(3, "p2", "Ada", "irrelevant"), ev(4, "p2", "Bob", "irrelevant"),
		ev(5, "p3", "Ada", "irrelevant"), ev(6, "p3", "Bob", "irrelevant"),
		ev(7, "p4", "Ada", "relevant"), ev(8, "p4", "Bob", "irrelevant"),
		resolution(9, "p4", "Cy", "relevant"),
		ev(10, "p9", "Cy", "relevant"),
	}
	got := research.Agreements(events)
	require.Len(t, got, 1, "only pairs with papers in common")
	require.Equal(t, "Ada", got[0].A)
	require.Equal(t, "Bob", got[0].B)
	require.Equal(t, 4, got[0].Items)
	require.Equal(t, 3, got[0].Agreed)
	// po = 3/4; Ada: 2 relevant, 2 irrelevant; Bob: 1 relevant, 3
	// irrelevant; pe = (2·1 + 2·3)/16 = 1/2; κ = (0.75 − 0.5)/0.5 = 0.5.
	require.InDelta(t, 0.5, got[0].Kappa, 1e-12)
}

// TestScreenProperties: over random screening histories, a paper counts
// only once enough people screened it; an agreed paper's marks are all
// the same; a reviewer never sees another's mark on a paper still
// pending; and dual screening never counts a paper single screening
// would not.
func TestScreenProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		plan := research.ScreeningPlan{Reviewers: rapid.IntRange(2, 3).Draw(t, "reviewers"), Resolver: research.ResolveByThird}
		people := []string{"Ada", "Bob", "Cy", "Dee"}
		n := rapid.IntRange(0, 40).Draw(t, "events")
		var events []research.Mark
		for i := range n {
			m := ev(i, fmt.Sprintf("p%d", rapid.IntRange(0, 5).Draw(t, "paper")), rapid.SampledFrom(people).Draw(t, "by"),
				rapid.SampledFrom([]string{"relevant", "irrelevant", "unsure"}).Draw(t, "mark"))
			m.Resolves = rapid.IntRange(0, 9).Draw(t, "resolves") == 0
			events = append(events, m)
		}
		vs := research.Screen(plan, events)
		pending := map[string]bool{}
		for _, v := range vs {
			switch v.Status {
			case research.VerdictPending:
				require.Less(t, len(v.Marks), plan.Reviewers)
				require.Nil(t, v.Final)
				pending[v.PaperID] = true
			case research.VerdictAgreed:
				for _, m := range v.Marks {
					require.Equal(t, v.Final.Mark, m.Mark)
				}
			case research.VerdictConflict:
				require.Nil(t, v.Final)
			case research.VerdictResolved:
				require.True(t, v.Final.Resolves)
			}
		}
		for _, viewer := range people {
			for _, m := range research.Visible(plan, viewer, events) {
				if pending[m.PaperID] {
					require.True(t, strings.EqualFold(m.By, viewer) && !m.Resolves, "%s sees %s's mark of pending %s", viewer, m.By, m.PaperID)
				}
			}
		}
		single := map[string]bool{}
		for _, m := range research.Counting(research.ScreeningPlan{Reviewers: 1}, events) {
			single[m.PaperID] = true
		}
		for _, m := range research.Counting(plan, events) {
			require.True(t, single[m.PaperID])
			require.False(t, pending[m.PaperID])
		}
	})
}
