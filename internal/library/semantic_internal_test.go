package library

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/store"
)

// TestBinaryScanKeepsTheExactNeighbours: over a library too large to
// compare exhaustively, of topics (clusters) as embeddings have them, the
// sign-bit scan with exact rescoring returns nearly all of the exact
// nearest papers, in the exact order where it finds them, and keeps the
// year range.
func TestBinaryScanKeepsTheExactNeighbours(t *testing.T) {
	t.Parallel()
	const n, dim, topics = 30000, 128, 300
	r := rand.New(rand.NewPCG(7, 8))
	centres := make([][]float32, topics)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for j := range dim {
			centres[c][j] = float32(r.NormFloat64()) + 0.5 // a shared offset, as real embeddings have
		}
	}
	set := store.VectorSet{Dim: dim, Docs: make([]int64, n), Years: make([]int, n), Data: make([]float32, n*dim)}
	for i := range n {
		set.Docs[i], set.Years[i] = int64(i+1), 2000+(i/topics)%20
		c := centres[i%topics]
		for j := range dim {
			set.Data[i*dim+j] = c[j] + 0.6*float32(r.NormFloat64())
		}
	}
	ix := newIndex(set)
	require.NotNil(t, ix.bits, "a library this size is scanned by its sign bits")
	for trial := range 20 {
		q := make([]float32, dim)
		for j := range dim {
			q[j] = centres[trial*7%topics][j] + 0.6*float32(r.NormFloat64())
		}
		q = normalised(q)
		years := research.YearRange{}
		if trial%2 == 1 {
			years = research.YearRange{From: 2010}
		}
		const k = 50
		got := ix.nearest(q, ix.inYears(years), k)
		var want []int64
		for _, s := range ix.exact(q, ix.inYears(years), 0, n, k) {
			want = append(want, s.doc)
		}
		found := 0
		for _, d := range got {
			if d < 1 {
				t.Fatal("bad docid")
			}
			if y := set.Years[d-1]; !years.Contains(y) {
				t.Fatalf("paper of %d outside %v", y, years)
			}
			for _, w := range want {
				if w == d {
					found++
				}
			}
		}
		require.GreaterOrEqual(t, float64(found)/k, 0.9, "trial %d: recall of the exact %d nearest", trial, k)
	}
}
