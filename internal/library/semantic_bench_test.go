package library_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// vectorsOnly is a VectorStore holding one model's vectors in memory, for
// the benchmark: the store's part (reading them once) is not measured.
type vectorsOnly struct {
	library.VectorStore
	set store.VectorSet
}

func (v vectorsOnly) VectorGeneration(context.Context) (int64, error) { return 1, nil }
func (v vectorsOnly) LibraryVectors(context.Context, string, int) (store.VectorSet, error) {
	set := v.set
	set.Data = slices.Clone(set.Data)
	return set, nil
}

type constEmbedder struct{ v []float32 }

func (c constEmbedder) Model() string { return "bench" }
func (c constEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return [][]float32{c.v}, nil
}

// BenchmarkSemanticNearest is one query over 170,000 vectors (both shared
// corpora) of 768 dimensions (nomic-embed-text, bge-base): what a search
// adds to the word ranking once the vectors are in memory.
func BenchmarkSemanticNearest(b *testing.B) {
	const n, dim = 170_000, 768
	r := rand.New(rand.NewPCG(1, 2))
	set := store.VectorSet{Model: "bench", Dim: dim, Generation: 1, Docs: make([]int64, n), Years: make([]int, n), Data: make([]float32, n*dim)}
	for i := range n {
		set.Docs[i], set.Years[i] = int64(i+1), 1990+i%35
	}
	for i := range set.Data {
		set.Data[i] = float32(r.NormFloat64())
	}
	q := make([]float32, dim)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	sem := library.NewSemantic(vectorsOnly{set: set}, constEmbedder{q})
	ctx := context.Background()
	if err := sem.Load(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := sem.Nearest(ctx, "warm", research.YearRange{}, 300); err != nil {
			b.Fatal(err)
		}
	}
}
