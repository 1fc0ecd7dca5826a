package store

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRebind(t *testing.T) {
	t.Parallel()
	pg := postgresDialect()
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b = ?`, `SELECT * FROM t WHERE a = $1 AND b = $2`},
		{`WHERE (?1 = '' OR r.status = ?1) AND x = ?12`, `WHERE ($1 = '' OR r.status = $1) AND x = $12`},
		{`VALUES (?2, ?, ?1)`, `VALUES ($2, $3, $1)`}, // a bare ? follows the largest number, as in SQLite
		{`SELECT '?', 'it''s ?', ?`, `SELECT '?', 'it''s ?', $1`},
		{`SELECT "a?b", ? FROM "t""?"`, `SELECT "a?b", $1 FROM "t""?"`},
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{`SELECT /* ? */ ? /* ?1`, `SELECT /* ? */ $1 /* ?1`},
		{`SELECT a-b, c/d, ?`, `SELECT a-b, c/d, $1`},
		{`SELECT json_extract(p, '$.a') = ?`, `SELECT json_extract(p, '$.a') = $1`},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
	} {
		require.Equal(t, c.want, pg.rebind(c.in), c.in)
		require.Equal(t, c.want, pg.rebind(c.in), "cached: %s", c.in)
	}
}

// Not parallel: AllocsPerRun refuses to run beside other tests.
func TestRebindSQLiteIsIdentity(t *testing.T) {
	q := `SELECT ? FROM t WHERE a = ?1`
	d := sqliteDialect()
	require.Equal(t, q, d.rebind(q))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = d.rebind(q) }))
	require.Equal(t, q, dialect{}.rebind(q), "the zero dialect is SQLite's")
}

func TestRebindCachedDoesNotAllocate(t *testing.T) {
	pg := postgresDialect()
	q := `SELECT ? FROM t WHERE a = ?1`
	pg.rebind(q)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = pg.rebind(q) }))
}

// randomQuery writes a query of random literals, identifiers, comments,
// plain text and placeholders, and what rebind must make of it: the same
// text with only the placeholders numbered.
func randomQuery(r *rand.Rand) (query, want string) {
	var q, w strings.Builder
	largest := 0
	both := func(s string) { q.WriteString(s); w.WriteString(s) }
	text := func() string {
		const alphabet = "ab ?'\"-/*\n$1("
		var s strings.Builder
		for range r.IntN(6) {
			s.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return s.String()
	}
	for range r.IntN(12) {
		switch r.IntN(7) {
		case 0:
			both("'" + strings.ReplaceAll(text(), "'", "''") + "'")
		case 1:
			both(`"` + strings.ReplaceAll(text(), `"`, `""`) + `"`)
		case 2:
			both("--" + strings.ReplaceAll(text(), "\n", " ") + "\n")
		case 3:
			both("/*" + strings.ReplaceAll(text(), "/", "") + "*/")
		case 4:
			both(" x ")
		case 5:
			largest++
			q.WriteString("?")
			w.WriteString("$" + strconv.Itoa(largest))
		case 6:
			n := 1 + r.IntN(20)
			largest = max(largest, n)
			q.WriteString("?" + strconv.Itoa(n))
			w.WriteString("$" + strconv.Itoa(n))
		}
		both(" ") // keeps a number after ? from running into the next token
	}
	return q.String(), w.String()
}

func TestRebindRandomQueries(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		q, want := randomQuery(r)
		require.Equal(t, want, rebindDollar(q), "query: %q", q)
	}
}

func FuzzRebind(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, seed*7919)
	}
	f.Fuzz(func(t *testing.T, a, b uint64) {
		q, want := randomQuery(rand.New(rand.NewPCG(a, b)))
		require.Equal(t, want, rebindDollar(q), "query: %q", q)
	})
}

// FuzzRebindAnyText checks, for any text, that rebind changes nothing but
// placeholders: deleting every ?NNN from the input and every $NNN rebind
// wrote leaves the same text.
func FuzzRebindAnyText(f *testing.F) {
	f.Add(`SELECT '?' || ? FROM "?" -- ?` + "\n" + `WHERE a = ?3 /* ? */`)
	f.Add(`?1?2??`)
	f.Fuzz(func(t *testing.T, q string) {
		if strings.Contains(q, "$") {
			t.Skip("the check below reads $ as rebind's")
		}
		got := rebindDollar(q)
		strip := func(s string, mark byte) string {
			var b strings.Builder
			for i := 0; i < len(s); i++ {
				if s[i] == mark {
					for i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
						i++
					}
					continue
				}
				b.WriteByte(s[i])
			}
			return b.String()
		}
		// Placeholders inside quotes and comments stay ?; outside they
		// become $: so stripping ? from the input, and both ? and $ from
		// the output, must agree.
		require.Equal(t, strip(q, '?'), strip(strip(got, '$'), '?'))
	})
}
