package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources"
	"quarry/internal/store"
)

// The fakes below are small, deterministic, real implementations of the
// skills, drawing papers from a fixed pool, so the properties test the
// pipeline's wiring and not the heuristics of the offline skills.

// pool is the fixed set of papers every fake source draws from.
var pool = func() []research.RawPaper {
	words := []string{"sqlite", "durability", "wal", "crash", "recovery", "fsync", "btree", "journal",
		"replication", "consensus", "raft", "paxos", "storage", "index", "query", "latency"}
	out := make([]research.RawPaper, 0, 16)
	for i := range 16 {
		out = append(out, research.RawPaper{
			Title:    fmt.Sprintf("%s and %s in practice", words[i], words[(i*7+3)%16]),
			Authors:  []string{fmt.Sprintf("Author %d", i%5)},
			Year:     2000 + i,
			DOI:      fmt.Sprintf("10.1000/p%02d", i),
			Abstract: strings.Repeat(words[i]+" ", 3),
		})
	}
	return out
}()

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// poolSource returns a deterministic slice of the pool chosen by the query.
type poolSource struct{ name string }

func (s poolSource) Name() string { return s.name }

func (s poolSource) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	h := int(hash(s.name + "|" + req.Query))
	start, n := h%len(pool), 1+h/len(pool)%6
	var out []research.RawPaper
	for i := range min(n, req.MaxResults) {
		out = append(out, pool[(start+i)%len(pool)])
	}
	return out, ctx.Err()
}

// failingSource is an outside API that is down.
type failingSource struct{ name string }

func (s failingSource) Name() string { return s.name }

func (s failingSource) Search(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
	return nil, errors.New("503 service unavailable")
}

// emptySource finds nothing.
type emptySource struct{ name string }

func (s emptySource) Name() string { return s.name }

func (s emptySource) Search(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
	return nil, nil
}

// chain records type-chain violations seen at each boundary: every skill
// checks that its input, which the previous step produced, validates.
type chain struct {
	mu     sync.Mutex
	broken []string
}

func (c *chain) check(boundary string, err error) {
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.broken = append(c.broken, boundary+": "+err.Error())
	}
}

func (c *chain) violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.broken)
}

type fakeIntent struct{ c *chain }

func (f fakeIntent) ParseIntent(ctx context.Context, q string) (research.ParsedIntent, error) {
	var concepts []research.Concept
	for _, w := range strings.Fields(strings.ToLower(q)) {
		w = strings.Trim(w, "?.,!")
		if len(w) > 2 && len(concepts) < 3 {
			concepts = append(concepts, research.Concept{Term: w})
		}
	}
	if len(concepts) == 0 {
		concepts = []research.Concept{{Term: "papers"}}
	}
	research.AddNote(ctx, research.Note{Skill: "intent", Message: "parsed offline"})
	return research.ParsedIntent{Topic: q, Concepts: concepts}, nil
}

type fakeBuilder struct{ c *chain }

func (f fakeBuilder) BuildStrategy(ctx context.Context, in skills.QueryInput) (research.SearchStrategy, error) {
	f.c.check("intent→build", in.Intent.Validate())
	for _, fb := range in.Feedback {
		f.c.check("feedback→build", fb.Validate())
	}
	terms := make([]string, 0, len(in.Intent.Concepts)+1)
	for _, c := range in.Intent.Concepts {
		terms = append(terms, c.Term)
	}
	for _, fb := range in.Feedback {
		terms = append(terms, fb.AddTerms...)
	}
	// Each iteration's strategy differs from the previous ones.
	text := strings.Join(terms, " ") + fmt.Sprintf(" v%d", len(in.Previous)+1)
	research.AddNote(ctx, research.Note{Skill: "queries", Message: "built " + text})
	return research.SearchStrategy{
		Queries: []research.Query{{Text: text}}, Sources: slices.Clone(in.Sources), MaxResultsPerSource: 5,
	}, nil
}

type fakeDedup struct{ c *chain }

func (f fakeDedup) Dedup(_ context.Context, papers []research.RawPaper) ([]research.RawPaper, research.DedupStats, error) {
	seen := map[string]int{}
	var out []research.RawPaper
	for _, p := range papers {
		f.c.check("search→dedup", p.Validate())
		if i, ok := seen[p.ID]; ok {
			out[i].Sources = append(out[i].Sources, p.Source)
			continue
		}
		seen[p.ID] = len(out)
		p.Sources = []string{p.Source}
		out = append(out, p)
	}
	return out, research.DedupStats{Input: len(papers), Output: len(out), Merged: len(papers) - len(out)}, nil
}

type fakeScorer struct{ c *chain }

func (f fakeScorer) Score(_ context.Context, in skills.ScoreInput) ([]research.ScoredPaper, error) {
	f.c.check("intent→score", in.Intent.Validate())
	rel := map[string]bool{}
	for _, p := range in.Relevant {
		rel[p.ID] = true
	}
	out := make([]research.ScoredPaper, 0, len(in.Papers))
	for _, p := range in.Papers {
		f.c.check("dedup→score", p.Validate())
		s := float64(hash(p.ID)%90) / 100
		if rel[p.ID] {
			s += 0.1
		}
		out = append(out, research.ScoredPaper{RawPaper: p, Score: s, Reasons: []string{"fake"}})
	}
	return out, nil
}

type fakeOrganizer struct{ c *chain }

func (f fakeOrganizer) Organize(_ context.Context, papers []research.ScoredPaper) ([]research.Group, error) {
	var even, odd []string
	for _, p := range papers {
		f.c.check("score→organize", p.Validate())
		if p.Year%2 == 0 {
			even = append(even, p.ID)
		} else {
			odd = append(odd, p.ID)
		}
	}
	var out []research.Group
	if len(even) > 0 {
		out = append(out, research.Group{Label: "even years", PaperIDs: even})
	}
	if len(odd) > 0 {
		out = append(out, research.Group{Label: "odd years", PaperIDs: odd})
	}
	return out, nil
}

// fakeSkills returns the fakes over the given sources, and the chain they
// report violations to.
func fakeSkills(sources ...sources.Source) (pipeline.Skills, *chain) {
	c := &chain{}
	return pipeline.Skills{
		Intent: fakeIntent{c}, Queries: fakeBuilder{c}, Sources: sources,
		Dedup: fakeDedup{c}, Scorer: fakeScorer{c}, Organizer: fakeOrganizer{c},
	}, c
}

// openStore opens a real SQLite store in a temp dir, one per test function.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "quarry.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newEngine builds an engine over st running wf, answering gates with h.
func newEngine(t require.TestingT, st *store.Store, wf *engine.Workflow, h engine.CheckpointHandler) *engine.Engine {
	reg, err := engine.NewRegistry(wf)
	require.NoError(t, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: h,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	return eng
}
