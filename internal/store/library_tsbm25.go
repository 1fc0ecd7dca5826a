package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"quarry/internal/research"
	"quarry/internal/textindex"
)

// The "postgres" ranking is FTS5's bm25 as textindex computes it
// (internal/textindex/bm25.go), from PostgreSQL's data alone: the
// tsquery finds the candidates (GIN), and each candidate's text_search,
// its lexemes' positions and labels, gives a phrase's occurrences per
// label and the row's length. A label stands for a column: A title, B
// abstract and compounds, C authors, D venue.

// FTS5's bm25 constants (fts5_aux.c), as textindex has them.
const (
	pgBM25K1 = 1.2
	pgBM25B  = 0.75
)

// tsLabels are text_search's weight labels in the index's column order
// (libraryWeights: title, abstract, authors, venue); compounds share B
// with the abstract, so B weighs as the abstract does.
const tsLabels = "ABCD"

// tsDocLen is the SQL of a text_search's token count: every position of
// every lexeme (bm25's |D|; PostgreSQL keeps at most 256 positions of a
// lexeme per row, so a row repeating a word more is counted short).
const tsDocLen = `(SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(p.text_search) u)`

// pgPhrase is one phrase of the expression, in FTS5's phrase order: its
// lexemes with their offsets from the first (as to_tsvector places
// them) and how many papers of the whole library hold it.
type pgPhrase struct {
	lex []string
	off []int
	n   int64
}

// phraseLeaves lists e's phrases left to right, NEAR groups' included:
// textindex's phrase order, duplicates apart.
func phraseLeaves(e *textindex.Expr, out []*textindex.Expr) []*textindex.Expr {
	if e.Op == textindex.OpPhrase {
		return append(out, e)
	}
	for _, k := range e.Kids {
		out = phraseLeaves(k, out)
	}
	return out
}

// pgPhrases normalises each phrase on the server and counts the papers
// holding it (its GIN index).
func (s *Store) pgPhrases(ctx context.Context, leaves []*textindex.Expr) ([]pgPhrase, error) {
	out := make([]pgPhrase, len(leaves))
	for i, l := range leaves {
		var words string
		err := s.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM papers p WHERE p.text_search @@ `+tsPhrase(1)+`),
			(SELECT coalesce(json_agg(json_build_object('l', u.lexeme, 'p', pos) ORDER BY pos), '[]')
				FROM unnest(to_tsvector('`+tsConfig+`', `+tsSeparate+`(?1))) u, unnest(u.positions) pos)`,
			l.Text).Scan(&out[i].n, &words)
		if err != nil {
			return nil, fmt.Errorf("store: search library: %w", err)
		}
		var ws []struct {
			L string `json:"l"`
			P int    `json:"p"`
		}
		if err := json.Unmarshal([]byte(words), &ws); err != nil {
			return nil, fmt.Errorf("store: search library: %w", err)
		}
		for _, w := range ws {
			out[i].lex = append(out[i].lex, w.L)
			out[i].off = append(out[i].off, w.P-ws[0].P)
		}
	}
	return out, nil
}

// tsEntry is one lexeme of a text_search: its positions and their labels.
type tsEntry struct {
	L string   `json:"l"`
	P []int    `json:"p"`
	W []string `json:"w"`
}

// rankLibraryTsvector is rankLibrary on PostgreSQL's text_search: the
// page from offset of at most limit papers best first by bm25 with
// weights (FTS5's value, negative, lower is better), ties by docid, and
// how many match in all. IDF and the average row length are over the
// whole library, as in FTS5 and the in-memory index, whatever the years
// and selection keep.
func (s *Store) rankLibraryTsvector(ctx context.Context, match string, weights []float64, years research.YearRange, offset, limit int) ([]textindex.Hit, int, error) {
	q, err := parseMatch(match)
	if err != nil {
		return nil, 0, err
	}
	tsq, err := s.tsqueryOf(ctx, q)
	if err != nil || tsq == "" {
		return nil, 0, err
	}
	leaves := phraseLeaves(q, nil)
	phrases, err := s.pgPhrases(ctx, leaves)
	if err != nil {
		return nil, 0, err
	}
	nRow, total, err := s.libraryLengths(ctx)
	if err != nil {
		return nil, 0, err
	}
	var want []string
	for _, p := range phrases {
		want = append(want, p.lex...)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		return nil, 0, err
	}
	args := []any{tsq, string(wantJSON)}
	where := tsFilter(ctx, years, &args)
	rows, err := s.read.QueryContext(ctx, `SELECT p.docid, `+tsDocLen+`,
			(SELECT coalesce(json_agg(json_build_object('l', u.lexeme, 'p', u.positions, 'w', u.weights)), '[]')
				FROM unnest(p.text_search) u WHERE u.lexeme IN (SELECT json_array_elements_text(CAST(?2 AS json))))
		FROM papers p WHERE p.text_search @@ CAST(?1 AS tsquery)`+where, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: search library: %w", err)
	}
	defer rows.Close()
	sc := newPGScorer(q, leaves, phrases, weights, nRow, total)
	var hits []textindex.Hit
	for rows.Next() {
		var h textindex.Hit
		var dl int64
		var entries string
		if err := rows.Scan(&h.Docid, &dl, &entries); err != nil {
			return nil, 0, fmt.Errorf("store: search library: %w", err)
		}
		var es []tsEntry
		if err := json.Unmarshal([]byte(entries), &es); err != nil {
			return nil, 0, fmt.Errorf("store: search library: %w", err)
		}
		h.Score = sc.score(es, dl)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: search library: %w", err)
	}
	slices.SortFunc(hits, func(a, b textindex.Hit) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Docid, b.Docid)
	})
	n := len(hits)
	end := n
	if limit > 0 {
		end = min(n, offset+limit)
	}
	if offset >= end {
		return []textindex.Hit{}, n, nil
	}
	return hits[offset:end], n, nil
}

// pgScorer is bm25 over one search's candidates.
type pgScorer struct {
	q       *textindex.Expr
	leafOf  map[*textindex.Expr]int
	phrases []pgPhrase
	weights []float64
	idf     []float64
	avgdl   float64
	// per row
	inst [][]uint64 // each phrase's instance starts, label<<32|position
	f    []float64  // each phrase's weighted count where it counts
}

func newPGScorer(q *textindex.Expr, leaves []*textindex.Expr, phrases []pgPhrase, weights []float64, nRow, total int64) *pgScorer {
	sc := &pgScorer{q: q, leafOf: map[*textindex.Expr]int{}, phrases: phrases, weights: weights,
		idf: make([]float64, len(phrases)), inst: make([][]uint64, len(phrases)), f: make([]float64, len(phrases))}
	for i, l := range leaves {
		sc.leafOf[l] = i
	}
	for i, p := range phrases {
		idf := math.Log((float64(nRow-p.n) + 0.5) / (float64(p.n) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		sc.idf[i] = idf
	}
	if nRow > 0 {
		sc.avgdl = float64(total) / float64(nRow)
	}
	return sc
}

// weight is label col's weight (a column without one weighs 1, as in FTS5).
func (sc *pgScorer) weight(col uint64) float64 {
	if int(col) < len(sc.weights) {
		return sc.weights[col]
	}
	return 1.0
}

// score is one row's bm25 given its entries for the phrases' lexemes and
// its length dl: each phrase adds in phrase order, as fts5Bm25Function
// does, counting only where its branch of the expression matched.
func (sc *pgScorer) score(es []tsEntry, dl int64) float64 {
	at := map[string]map[uint64]bool{}
	for _, e := range es {
		set := map[uint64]bool{}
		for k, p := range e.P {
			label := "D" // a position without a label is D's
			if k < len(e.W) {
				label = e.W[k]
			}
			col := uint64(len(tsLabels) - 1)
			if i := indexLabel(label); i >= 0 {
				col = uint64(i)
			}
			set[col<<32|uint64(p)] = true
		}
		at[e.L] = set
	}
	for i, p := range sc.phrases {
		sc.inst[i] = sc.inst[i][:0]
		sc.f[i] = 0
		if len(p.lex) == 0 {
			continue
		}
		for k := range at[p.lex[0]] {
			ok := true
			for j := 1; j < len(p.lex) && ok; j++ {
				ok = at[p.lex[j]][k+uint64(p.off[j])]
			}
			if ok {
				sc.inst[i] = append(sc.inst[i], k)
			}
		}
		slices.Sort(sc.inst[i])
	}
	if sc.match(sc.q) {
		sc.contrib(sc.q)
	}
	norm := pgBM25K1 * (1 - pgBM25B + pgBM25B*float64(dl)/sc.avgdl)
	var sum float64
	for i, f := range sc.f {
		sum += sc.idf[i] * ((f * (pgBM25K1 + 1.0)) / (f + norm))
	}
	return -1.0 * sum
}

func indexLabel(l string) int {
	for i := range len(tsLabels) {
		if tsLabels[i:i+1] == l {
			return i
		}
	}
	return -1
}

// near is a NEAR group's test over the row, and the instances of each of
// its phrases that took part.
func (sc *pgScorer) near(e *textindex.Expr) ([][]uint64, bool) {
	pos := make([][]uint64, len(e.Kids))
	lens := make([]int, len(e.Kids))
	for i, k := range e.Kids {
		l := sc.leafOf[k]
		pos[i], lens[i] = sc.inst[l], len(sc.phrases[l].lex)
	}
	return textindex.NearMatch(pos, lens, e.Dist)
}

// match reports whether e matches the row.
func (sc *pgScorer) match(e *textindex.Expr) bool {
	switch e.Op {
	case textindex.OpPhrase:
		return len(sc.inst[sc.leafOf[e]]) > 0
	case textindex.OpAnd:
		for _, k := range e.Kids {
			if !sc.match(k) {
				return false
			}
		}
		return true
	case textindex.OpOr:
		for _, k := range e.Kids {
			if sc.match(k) {
				return true
			}
		}
		return false
	case textindex.OpNot:
		return sc.match(e.Kids[0]) && !sc.match(e.Kids[1])
	case textindex.OpNear:
		if len(e.Kids) == 1 {
			return sc.match(e.Kids[0])
		}
		_, ok := sc.near(e)
		return ok
	}
	return false
}

// contrib sets f for e's phrases in a row e matches: as textindex (and
// FTS5), every child of an AND, the matching children of an OR, the left
// side of a NOT, and in a NEAR group the instances that took part.
func (sc *pgScorer) contrib(e *textindex.Expr) {
	switch e.Op {
	case textindex.OpPhrase:
		l := sc.leafOf[e]
		sc.f[l] = sc.counted(sc.inst[l])
	case textindex.OpAnd:
		for _, k := range e.Kids {
			sc.contrib(k)
		}
	case textindex.OpOr:
		for _, k := range e.Kids {
			if sc.match(k) {
				sc.contrib(k)
			}
		}
	case textindex.OpNot:
		sc.contrib(e.Kids[0])
	case textindex.OpNear:
		if len(e.Kids) == 1 {
			sc.contrib(e.Kids[0])
			return
		}
		kept, _ := sc.near(e)
		for i, k := range e.Kids {
			sc.f[sc.leafOf[k]] = sc.counted(kept[i])
		}
	}
}

// counted is bm25's f of instances: each weighs its column's weight.
func (sc *pgScorer) counted(inst []uint64) float64 {
	var f float64
	for _, k := range inst {
		f += sc.weight(k >> 32)
	}
	return f
}

// tsStats caches bm25's N (papers) and the sum of their lengths, which
// take a scan of every text_search (about a second on 11,000 papers): they are
// kept with the library_log head they were read at, which every write to
// a paper's text moves, so a cached figure is never used after a change.
type tsStats struct {
	mu          sync.Mutex
	head        int64
	valid       bool
	nRow, total int64
}

// libraryLengths is the library's paper count and total token count for
// bm25's idf and avgdl, computed again when library_log has moved.
func (s *Store) libraryLengths(ctx context.Context) (nRow, total int64, err error) {
	st := &s.tsStats
	st.mu.Lock()
	defer st.mu.Unlock()
	head, _, err := s.libraryLogBounds(ctx)
	if err != nil {
		return 0, 0, err
	}
	if st.valid && st.head == head {
		return st.nRow, st.total, nil
	}
	// Read after the head: a write in between is counted here and moves
	// the head, so the next search reads again.
	if err := s.read.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(`+tsDocLen+`), 0) FROM papers p`).Scan(&nRow, &total); err != nil {
		return 0, 0, fmt.Errorf("store: search library: %w", err)
	}
	st.head, st.valid, st.nRow, st.total = head, true, nRow, total
	return nRow, total, nil
}
