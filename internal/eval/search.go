package eval

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

// offlineSearch is the searcher's options for a measurement: its per-call
// timeout and per-source deadline guard a run against a slow API, and here
// would only turn a slow machine (the race detector multiplies ranking
// time several times over) into a failed measurement.
func offlineSearch() searcher.Options {
	return searcher.Options{Timeout: 30 * time.Minute, SourceDeadline: 30 * time.Minute}
}

// SearchCaps are the cut-offs the search benchmark reports recall at: the
// first N records of a ranked result.
var SearchCaps = []int{25, 100, 500, 1000}

// BM25 constants of the baseline: Okapi's usual values, not tuned.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// SearchResult is one review's recall at each of SearchCaps, for the
// product's first search iteration and for the BM25 baseline.
type SearchResult struct {
	Review   string `json:"review"`
	Included int    `json:"included"`
	// Returned is how many records the product's search returned (it may
	// be fewer than the largest cap: strict Boolean matching).
	Returned int `json:"returned"`
	// Unpooled counts included records the library cannot hold (no title):
	// misses for both methods.
	Unpooled int       `json:"unpooled"`
	Recall   []float64 `json:"recall"`
	BM25     []float64 `json:"bm25_recall"`
}

// SearchSummary is every review's result and the means over reviews with
// at least one included record, per cap.
type SearchSummary struct {
	Pool int `json:"pool"`
	// Library is how many papers the temporary library holds: Pool unless
	// two pooled records share a stable ID.
	Library    int            `json:"library"`
	Reviews    []SearchResult `json:"reviews"`
	MeanRecall []float64      `json:"mean_recall"`
	MeanBM25   []float64      `json:"mean_bm25_recall"`
}

// searchPool is every review's records deduplicated by PMID, DOI, then
// normalised title: what a library holding all of them would hold once.
type searchPool struct {
	papers []research.RawPaper
	keys   map[string]int
}

// poolKeys are a record's identity keys in the order they are trusted.
func poolKeys(p research.RawPaper) []string {
	var ks []string
	if v := strings.TrimSpace(p.PMID); v != "" {
		ks = append(ks, "pmid:"+v)
	}
	if v := research.NormalizeDOI(p.DOI); v != "" {
		ks = append(ks, "doi:"+v)
	}
	if v := research.NormalizeTitle(p.Title); v != "" {
		ks = append(ks, "t:"+v)
	}
	return ks
}

// find is the pool index of a record with one of p's keys, or -1.
func (sp *searchPool) find(p research.RawPaper) int {
	for _, k := range poolKeys(p) {
		if i, ok := sp.keys[k]; ok {
			return i
		}
	}
	return -1
}

// add puts p in the pool unless it is there already (then it fills what
// the pooled copy lacks), and returns its index.
func (sp *searchPool) add(p research.RawPaper) int {
	i := sp.find(p)
	if i < 0 {
		i = len(sp.papers)
		p.ID = ""
		sp.papers = append(sp.papers, p)
	} else {
		q := &sp.papers[i]
		if q.Abstract == "" {
			q.Abstract = p.Abstract
		}
		if q.DOI == "" {
			q.DOI = p.DOI
		}
		if q.PMID == "" {
			q.PMID = p.PMID
		}
		if q.Year == 0 {
			q.Year = p.Year
		}
		if len(q.Authors) == 0 {
			q.Authors = p.Authors
		}
	}
	for _, k := range poolKeys(p) {
		if _, ok := sp.keys[k]; !ok {
			sp.keys[k] = i
		}
	}
	return i
}

// Search measures the first iteration of the product's search, run offline
// over a library holding every record of every review in dir, with each
// review's question: the recall of its included records at SearchCaps,
// beside an Okapi BM25 baseline over the same pool. It prints one line per
// review and a last line "search: recall@100=… recall@500=…
// bm25_recall@100=… bm25_recall@500=…".
func Search(ctx context.Context, dir string, out io.Writer) (SearchSummary, error) {
	return SearchOn(ctx, dir, out, SearchLibrary{})
}

// SearchLibrary is where the search benchmark keeps its temporary library:
// by default a SQLite file in a temporary directory; with DSN, an empty
// PostgreSQL database (its tables are left behind for the caller to
// drop), ranked as Ranking says (store.Options.LibraryRanking). It is how
// the two databases' rankings are compared on the same data.
type SearchLibrary struct {
	DSN     string
	Ranking string
}

// SearchOn is Search with its library where lib says.
func SearchOn(ctx context.Context, dir string, out io.Writer, lib SearchLibrary) (SearchSummary, error) {
	sums, err := searchTunings(ctx, dir, out, []local.Tuning{local.DefaultTuning()}, true, lib)
	if err != nil {
		return SearchSummary{}, err
	}
	return sums[0], nil
}

// searchTunings measures the first iteration with each of tunings over one
// pool, printing the per-review lines of each when verbose.
func searchTunings(ctx context.Context, dir string, out io.Writer, tunings []local.Tuning, verbose bool, lib SearchLibrary) ([]SearchSummary, error) {
	var pooled SearchSummary
	names, err := ScreeningReviewNames(dir)
	if err != nil {
		return nil, err
	}
	reviews := make([]ScreeningReview, 0, len(names))
	pool := &searchPool{keys: map[string]int{}}
	untitled := 0
	for _, name := range names {
		rev, err := ReadScreeningReview(dir, name)
		if err != nil {
			return nil, err
		}
		for _, r := range rev.Records {
			if strings.TrimSpace(r.Paper.Title) == "" {
				untitled++ // a library cannot hold it (the import requires a title)
				continue
			}
			pool.add(r.Paper)
		}
		reviews = append(reviews, rev)
	}
	pooled.Pool = len(pool.papers)

	tmp, err := os.MkdirTemp("", "quarry-eval-search-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "library.db")
	if lib.DSN != "" {
		path = lib.DSN
	}
	st, err := store.Open(ctx, path, store.Options{Synchronous: "OFF", ImportReserve: -1, LibraryRanking: lib.Ranking})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	i := 0
	next := func() (library.Record, error) {
		if i >= len(pool.papers) {
			return library.Record{}, io.EOF
		}
		p := pool.papers[i]
		p.ID = research.StableID(p)
		i++
		return library.Record{Line: i, Paper: p, Origin: "pool"}, nil
	}
	stats, err := library.Import(ctx, st, next, library.ImportOptions{})
	if err != nil {
		return nil, err
	}
	// The library keys papers by research.StableID, which can join two
	// records the pool keeps apart: say so rather than measure a smaller
	// library silently.
	if pooled.Library, err = st.LibraryCount(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "pool: records=%d library=%d reviews=%d untitled=%d skipped=%d%s\n", pooled.Pool, pooled.Library, len(reviews), untitled, stats.Skipped, skipReasons(stats))
	bm := newBM25(pool.papers)
	type target struct {
		rev      ScreeningReview
		included map[int]bool
		lost     int
		bm25     []float64
	}
	var targets []target
	for _, rev := range reviews {
		// An included record the pool does not hold (it has no title and
		// no PMID or DOI of a titled one) stays in the denominator, under a
		// key of its own: neither method can find it.
		included := map[int]bool{}
		lost := 0
		for _, r := range rev.Records {
			if !r.Included {
				continue
			}
			i := pool.find(r.Paper)
			if i < 0 {
				lost++
				i = -lost
			}
			included[i] = true
		}
		targets = append(targets, target{rev, included, lost, recallAt(bm.rank(rev.Question, SearchCaps[len(SearchCaps)-1]), included)})
	}
	var sums []SearchSummary
	for _, tn := range tunings {
		sum := SearchSummary{Pool: pooled.Pool, Library: pooled.Library}
		lib, err := local.NewTuned(st, tn)
		if err != nil {
			return nil, err
		}
		srch, err := searcher.New([]sources.Source{lib}, offlineSearch())
		if err != nil {
			return nil, err
		}
		w := out
		if !verbose {
			w = io.Discard
		}
		for _, t := range targets {
			res := SearchResult{Review: t.rev.Name, Included: len(t.included), Unpooled: t.lost, BM25: t.bm25}
			ranked, err := productRanking(ctx, srch, pool, t.rev.Question)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.rev.Name, err)
			}
			res.Returned = len(ranked)
			res.Recall = recallAt(ranked, t.included)
			fmt.Fprintf(w, "%s: included=%d unpooled=%d returned=%d%s%s\n", res.Review, res.Included, res.Unpooled, res.Returned,
				formatRecalls("recall", res.Recall), formatRecalls("bm25_recall", res.BM25))
			sum.Reviews = append(sum.Reviews, res)
		}
		sum.MeanRecall = meanOver(sum.Reviews, func(r SearchResult) []float64 { return r.Recall })
		sum.MeanBM25 = meanOver(sum.Reviews, func(r SearchResult) []float64 { return r.BM25 })
		fmt.Fprintf(w, "mean:%s%s\n", formatRecalls("recall", sum.MeanRecall), formatRecalls("bm25_recall", sum.MeanBM25))
		fmt.Fprintf(w, "search: recall@100=%.4f recall@500=%.4f bm25_recall@100=%.4f bm25_recall@500=%.4f\n",
			sum.MeanRecall[1], sum.MeanRecall[2], sum.MeanBM25[1], sum.MeanBM25[2])
		sums = append(sums, sum)
	}
	return sums, nil
}

// meanOver is the mean per cap of f over the reviews with at least one
// included record.
func meanOver(reviews []SearchResult, f func(SearchResult) []float64) []float64 {
	out := make([]float64, len(SearchCaps))
	var n float64
	for _, r := range reviews {
		if r.Included == 0 {
			continue
		}
		n++
		for c, v := range f(r) {
			out[c] += v
		}
	}
	for c := range out {
		if n > 0 {
			out[c] /= n
		}
	}
	return out
}

// skipReasons is why the import left records out, for the pool line.
func skipReasons(s library.ImportStats) string {
	if s.Skipped == 0 {
		return ""
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(s.SkipReasons)) {
		parts = append(parts, fmt.Sprintf("%s: %d", r, s.SkipReasons[r]))
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// productRanking is FirstSearch at the local source's largest cap, as
// pool indexes in the searcher's order, each once.
func productRanking(ctx context.Context, srch *searcher.Searcher, pool *searchPool, question string) ([]int, error) {
	papers, err := FirstSearch(ctx, srch, question, research.MaxResultsLimit)
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var ranked []int
	for _, p := range papers {
		i := pool.find(p)
		if i < 0 || seen[i] {
			continue
		}
		seen[i] = true
		ranked = append(ranked, i)
	}
	return ranked, nil
}

// FirstSearch runs the first iteration of the product's search as a run
// does it offline: the heuristic intent parser, the offline query builder
// (asking each source for up to max records) and srch, a searcher over the
// local library. It returns what the searcher found, in its order.
func FirstSearch(ctx context.Context, srch *searcher.Searcher, question string, max int) ([]research.RawPaper, error) {
	in, err := intent.New(nil).ParseIntent(ctx, question)
	if err != nil {
		return nil, err
	}
	strat, err := querybuilder.New().BuildStrategy(ctx, skills.QueryInput{
		Intent:              in,
		Sources:             []string{research.SourceLocal},
		MaxResultsPerSource: max,
	})
	if err != nil {
		return nil, err
	}
	res, err := srch.Search(ctx, strat)
	if err != nil {
		return nil, err
	}
	if s := res.Sources[research.SourceLocal]; s.Error != "" {
		return nil, fmt.Errorf("local search: %s", s.Error)
	}
	return res.Papers, nil
}

// recallAt is, per cap of SearchCaps, the share of included found among
// the first cap of ranked (0 when nothing is included).
func recallAt(ranked []int, included map[int]bool) []float64 {
	out := make([]float64, len(SearchCaps))
	if len(included) == 0 {
		return out
	}
	for c, n := range SearchCaps {
		found := 0
		for _, i := range ranked[:min(n, len(ranked))] {
			if included[i] {
				found++
			}
		}
		out[c] = float64(found) / float64(len(included))
	}
	return out
}

func formatRecalls(name string, r []float64) string {
	var b strings.Builder
	for c, n := range SearchCaps {
		fmt.Fprintf(&b, " %s@%d=%.4f", name, n, r[c])
	}
	return b.String()
}

// bm25 is the baseline: Okapi BM25 over each record's title and abstract,
// with the question's words as the query, no stemming, no stop list.
type bm25 struct {
	docs  []map[string]int
	lens  []float64
	avgdl float64
	df    map[string]int
}

// bm25Words is the baseline's tokenisation: lower-cased runs of letters
// and digits.
func bm25Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func newBM25(papers []research.RawPaper) *bm25 {
	b := &bm25{df: map[string]int{}}
	var total float64
	for _, p := range papers {
		tf := map[string]int{}
		ws := bm25Words(p.Title + " " + p.Abstract)
		for _, w := range ws {
			tf[w]++
		}
		for w := range tf {
			b.df[w]++
		}
		b.docs = append(b.docs, tf)
		b.lens = append(b.lens, float64(len(ws)))
		total += float64(len(ws))
	}
	if len(papers) > 0 {
		b.avgdl = total / float64(len(papers))
	}
	return b
}

// rank returns the indexes of the top n records scoring above zero for
// question, best first (ties by pool order).
func (b *bm25) rank(question string, n int) []int {
	terms := slices.Compact(slices.Sorted(slices.Values(bm25Words(question))))
	N := float64(len(b.docs))
	type scored struct {
		i int
		s float64
	}
	var all []scored
	for i, tf := range b.docs {
		var s float64
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*b.lens[i]/b.avgdl))
		}
		if s > 0 {
			all = append(all, scored{i, s})
		}
	}
	slices.SortStableFunc(all, func(x, y scored) int {
		switch {
		case x.s > y.s:
			return -1
		case x.s < y.s:
			return 1
		}
		return x.i - y.i
	})
	out := make([]int, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.i)
	}
	return out
}
