package dedup

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveLevenshtein is the textbook full-matrix edit distance, the oracle
// for the banded, early-exit version the matcher uses.
func naiveLevenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func TestLevenshteinMatchesNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte("abcde "[rng.IntN(6)])
		}
		return b.String()
	}
	for range 3000 {
		a := word(rng.IntN(40))
		b := []byte(a)
		// Mostly near-identical pairs, as in deduplication, some unrelated.
		for range rng.IntN(6) {
			if len(b) > 0 {
				b[rng.IntN(len(b))] = "xyz"[rng.IntN(3)]
			}
		}
		bs := string(b)
		if rng.IntN(4) == 0 {
			bs = word(rng.IntN(40))
		}
		limit := rng.IntN(12)
		want := naiveLevenshtein(a, bs)
		got := levenshtein(a, bs, limit)
		if want <= limit {
			require.Equal(t, want, got, "levenshtein(%q, %q, %d)", a, bs, limit)
		} else {
			require.Greater(t, got, limit, "levenshtein(%q, %q, %d) must report over the limit", a, bs, limit)
		}
	}
	long := strings.Repeat("abc", 200) // beyond the stack buffer
	require.Equal(t, 1, levenshtein(long, long[1:], 5))
}
