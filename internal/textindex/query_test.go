package textindex

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePrecedence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`a`, `"a"`},
		{`"large language models"`, `"large language models"`},
		{`"say ""hi"""`, `"say ""hi"""`},
		{`a b`, `"a" AND "b"`},
		{`a b OR c`, `"a" AND "b" OR "c"`},
		{`a OR b c`, `"a" OR "b" AND "c"`},
		{`a NOT b c`, `"a" NOT ("b" AND "c")`},
		{`a AND b NOT c`, `"a" AND "b" NOT "c"`},
		{`a OR b AND c`, `"a" OR "b" AND "c"`},
		{`(a OR b) AND c`, `("a" OR "b") AND "c"`},
		{`a NOT b NOT c`, `"a" NOT "b" NOT "c"`},
		{`a NOT (b NOT c)`, `"a" NOT ("b" NOT "c")`},
		{`(a AND b) AND (c AND d)`, `"a" AND "b" AND "c" AND "d"`},
		{`("a" OR "b") AND ("c" OR "d") NOT "e" NOT "f"`, `("a" OR "b") AND ("c" OR "d") NOT "e" NOT "f"`},
		{`and or not`, `"and" AND "or" AND "not"`},
		{`NEAR`, `"NEAR"`},
	} {
		e, err := Parse(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, e.String(), c.in)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in          string
		unsupported bool
	}{
		{``, false}, {`   `, false}, {`a AND`, false}, {`NOT a`, false}, {`a OR OR b`, false}, {`(a`, false},
		{`a)`, false}, {`(a) b`, false}, {`a (b)`, false}, {`"a`, false}, {`a.b`, false}, {`()`, false},
		{`a*`, true}, {`"a"*`, true}, {`^a`, true}, {`title:a`, true}, {`{title}: a`, true}, {`-a`, true},
		{`a + b`, true}, {`NEAR()`, false}, {`NEAR(a b,)`, false}, {`NEAR(a b, x)`, false}, {`NEAR(a OR b)`, false},
		{`NEAR(a b`, false}, {`NEAR(a* b)`, true},
	} {
		_, err := Parse(c.in)
		var qe *QueryError
		require.True(t, errors.As(err, &qe), "%q: %v", c.in, err)
		require.Equal(t, c.unsupported, qe.Unsupported, "%q: %v", c.in, err)
	}
}

// randomExpr builds a random normalised expression whose phrases hold
// quotes, spaces and keywords, to render and read back.
func randomExpr(rng *rand.Rand, depth int) *Expr {
	if depth == 0 || rng.IntN(3) == 0 {
		parts := []string{"a", "b c", `say "x"`, "AND", "or", "NOT", "ü", " ", `""`, "(", "*"}
		return &Expr{Op: OpPhrase, Text: parts[rng.IntN(len(parts))] + parts[rng.IntN(len(parts))]}
	}
	switch rng.IntN(3) {
	case 0:
		return join(OpAnd, randomExpr(rng, depth-1), randomExpr(rng, depth-1))
	case 1:
		return join(OpOr, randomExpr(rng, depth-1), randomExpr(rng, depth-1))
	}
	return &Expr{Op: OpNot, Kids: []*Expr{randomExpr(rng, depth-1), randomExpr(rng, depth-1)}}
}

func TestParseRoundTripProperty(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for range 5000 {
		e := randomExpr(rng, 4)
		got, err := Parse(e.String())
		require.NoError(t, err, e.String())
		require.Equal(t, e, got, e.String())
	}
}

// TestParseAgreesWithFTS5 feeds random token strings of the subset to
// both parsers: FTS5 accepts exactly what Parse accepts, and they match
// the same rows (so precedence and implicit AND agree).
func TestParseAgreesWithFTS5(t *testing.T) {
	t.Parallel()
	d := newFTS5Diff(t, 3)
	for id := int64(1); id <= 150; id++ {
		cols := d.row()
		d.put(id, cols)
		require.NoError(t, d.ix.Add(id, cols))
	}
	rng := rand.New(rand.NewPCG(11, 13))
	toks := []string{"alpha", "beta", `"gamma delta"`, "eta", "AND", "OR", "NOT", "(", ")", "NEAR(", ",", "3", "NEAR"}
	accepted := 0
	for range 3000 {
		n := 1 + rng.IntN(7)
		w := make([]string, n)
		for i := range w {
			w[i] = toks[rng.IntN(len(toks))]
		}
		match := strings.Join(w, " ")
		e, err := Parse(match)
		rows, ftsErr := d.db.Query(`SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid`, match)
		var want []int64
		if ftsErr == nil {
			for rows.Next() {
				var id int64
				require.NoError(t, rows.Scan(&id))
				want = append(want, id)
			}
			ftsErr = rows.Err()
			rows.Close()
		}
		require.Equal(t, ftsErr == nil, err == nil, "%s: fts5 %v, Parse %v", match, ftsErr, err)
		if err != nil {
			continue
		}
		accepted++
		hits, _, err := d.ix.Search(e, nil, 0, 0, nil)
		require.NoError(t, err)
		var got []int64
		for _, h := range hits {
			got = append(got, h.Docid)
		}
		slicesSort(got)
		require.Equal(t, want, got, match)
	}
	t.Logf("parser agreement with fts5: 3000 random token strings, %d accepted by both, the rest rejected by both", accepted)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`a`, `"a b" OR c`, `(a AND b) NOT "c"""`, `a b NOT (c OR d)`, `NEAR(a)`, `"x`, `ü*`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var qe *QueryError
			require.True(t, errors.As(err, &qe))
			return
		}
		again, err := Parse(e.String())
		require.NoError(t, err, e.String())
		require.Equal(t, e, again)
	})
}
