package local

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/text"
)

// Tuning holds the ranked retrieval's constants. Each was chosen by
// leave-one-review-out over the shared screening reviews (quarry eval
// --loso search; docs/search.md lists the held-out figures).
type Tuning struct {
	// TitleWeight is how much more a term in the title counts than the
	// same term in the abstract (bm25 column weight).
	TitleWeight float64
	// WordsWeight is the weight of the list that ranks by every word of
	// every concept at once (a plain BM25 over the query's words), beside
	// the one list per concept that each count 1.
	WordsWeight float64
	// FeedbackDocs is how many of the best-ranked papers pseudo-relevance
	// feedback reads; FeedbackTerms how many of their words it adds;
	// FeedbackWeight the weight of the list those words rank. Zero docs
	// or terms turn feedback off.
	FeedbackDocs   int
	FeedbackTerms  int
	FeedbackWeight float64
	// ConceptDecay lowers the weight of later concepts: the i-th (from 0)
	// counts 1/(1+ConceptDecay*i). Builders put the concepts that say what
	// the question is about first, and the study types last.
	ConceptDecay float64
	// Candidates is how many papers each list keeps before fusion (at
	// least the page asked for, twice over).
	Candidates int
}

// DefaultTuning is the tuning the product ranks with.
func DefaultTuning() Tuning {
	return Tuning{
		TitleWeight:    20,
		WordsWeight:    1,
		ConceptDecay:   1,
		FeedbackDocs:   10,
		FeedbackTerms:  10,
		FeedbackWeight: 1.5,
		Candidates:     3000,
	}
}

// rankReaders bounds the library reads one ranked search runs at once.
const rankReaders = 4

// ranking is one ranked retrieval's fused scores: every paper that matched
// a term of the query (and no excluded term), by docid.
type ranking struct {
	score map[int64]float64
}

func (r *ranking) add(hits []research.LibraryHit, weight float64) {
	if len(hits) == 0 || weight == 0 {
		return
	}
	top := hits[0].Score
	if top <= 0 {
		return
	}
	for _, h := range hits {
		r.score[h.Doc] += weight * h.Score / top
	}
}

// ordered is the docids best first, ties by docid (stable pages).
func (r *ranking) ordered() []int64 {
	docs := make([]int64, 0, len(r.score))
	for d := range r.score {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b int64) int {
		if c := cmp.Compare(r.score[b], r.score[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return docs
}

// ftsTerm is a term as one FTS5 string literal (quotes doubled), so no
// character of it can change the expression.
func ftsTerm(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// termWords are the words of a term as the index splits them.
func termWords(t query.Term) []string {
	return text.Words(t.Text)
}

// conceptExpr matches a concept (one OR group) loosely: each term as
// written (a phrase stays a phrase), its words near each other, or all
// its words anywhere. bm25 sums every phrase of the expression a paper
// matches, so the exact phrase scores above the words close together,
// which score above the words apart: the phrase and proximity boosts.
func conceptExpr(c query.Clause) string {
	var alts []string
	for _, t := range c.Any {
		ws := termWords(t)
		if len(ws) == 0 {
			continue
		}
		alts = append(alts, ftsTerm(t.Text))
		if len(ws) > 1 {
			quoted := make([]string, len(ws))
			for i, w := range ws {
				quoted[i] = ftsTerm(w)
			}
			alts = append(alts, "NEAR("+strings.Join(quoted, " ")+", 5)", "("+strings.Join(quoted, " AND ")+")")
		}
	}
	return strings.Join(alts, " OR ")
}

// wordsExpr matches any of words.
func wordsExpr(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = ftsTerm(w)
	}
	return strings.Join(quoted, " OR ")
}

// withExclusions keeps expr's matches that match none of the excluded
// clauses.
func withExclusions(expr string, excluded []query.Clause) string {
	var not []string
	for _, c := range excluded {
		for _, t := range c.Any {
			if len(termWords(t)) > 0 {
				not = append(not, ftsTerm(t.Text))
			}
		}
	}
	if len(not) == 0 {
		return expr
	}
	return "(" + expr + ") NOT (" + strings.Join(not, " OR ") + ")"
}

// anyTermExpr matches the papers that match some included term of q (its
// words apart, for a phrase) and no excluded one: what a ranked search
// says matched.
func anyTermExpr(q query.AST) string {
	included, excluded := clauses(q)
	var alts []string
	for _, c := range included {
		if e := conceptExpr(c); e != "" {
			alts = append(alts, e)
		}
	}
	return withExclusions(strings.Join(alts, " OR "), excluded)
}

// queryWords are the distinct words (lower-cased) of the included terms,
// stop words left out unless a term is nothing else.
func queryWords(clauses []query.Clause) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range clauses {
		for _, t := range c.Any {
			ws := termWords(t)
			for _, w := range ws {
				if (text.IsStopword(w) && len(ws) > 1) || seen[w] {
					continue
				}
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// rank ranks the library for q: one bm25 list per included concept (so a
// paper that matches every concept outranks one that matches a single
// concept many times), one over all the query's words, and one over words
// the best papers share (pseudo-relevance feedback), fused by their
// max-normalised scores. Papers matching an excluded clause are left out.
func (s *Source) rank(ctx context.Context, q query.AST, req sources.SourceRequest, need int) ([]int64, error) {
	included, excluded := clauses(q)
	tn := s.tuning
	words := queryWords(included)
	all := words
	for _, w := range req.QuestionWords {
		if w = strings.ToLower(w); !slices.Contains(all, w) && len(termWords(query.Term{Text: w})) > 0 {
			all = append(all, w)
		}
	}
	var lists []list
	for i, c := range included {
		lists = append(lists, list{expr: conceptExpr(c), weight: 1 / (1 + tn.ConceptDecay*float64(i))})
	}
	if len(all) > 1 {
		lists = append(lists, list{expr: wordsExpr(all), weight: tn.WordsWeight})
	}
	r := &ranking{score: map[int64]float64{}}
	limit := max(tn.Candidates, 2*need)
	if err := s.addLists(ctx, r, lists, excluded, req.YearRange, limit); err != nil {
		return nil, err
	}
	if tn.FeedbackDocs > 0 && tn.FeedbackTerms > 0 && tn.FeedbackWeight > 0 {
		fb, err := s.feedbackTerms(ctx, r.ordered(), words)
		if err != nil {
			return nil, err
		}
		if len(fb) > 0 {
			if err := s.addLists(ctx, r, []list{{expr: wordsExpr(fb), weight: tn.FeedbackWeight}}, excluded, req.YearRange, limit); err != nil {
				return nil, err
			}
		}
	}
	return s.hybrid(ctx, r.ordered(), all, excluded, req.YearRange)
}

// list is one bm25 list of a ranked search: its expression, its weight in
// the fusion, and the papers it ranked.
type list struct {
	expr   string
	weight float64
	hits   []research.LibraryHit
}

// addLists reads lists (without the excluded papers, inside years) and adds
// them to r. The reads are independent: they run at once (rankReaders at
// most), and are added in the order given so that the sums (and so the
// ranking) never depend on which finished first.
func (s *Source) addLists(ctx context.Context, r *ranking, lists []list, excluded []query.Clause, years research.YearRange, limit int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rankReaders)
	for i := range lists {
		if lists[i].expr == "" || lists[i].weight == 0 {
			continue
		}
		g.Go(func() error {
			h, err := s.lib.LibraryHits(gctx, withExclusions(lists[i].expr, excluded), years, s.tuning.TitleWeight, limit)
			lists[i].hits = h
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, l := range lists {
		r.add(l.hits, l.weight)
	}
	return nil
}

// clauses splits q into its included clauses (those with a term) and its
// excluded ones.
func clauses(q query.AST) (included, excluded []query.Clause) {
	for _, c := range q.Clauses {
		if c.Not {
			excluded = append(excluded, c)
		} else if len(c.Any) > 0 {
			included = append(included, c)
		}
	}
	return included, excluded
}

// feedbackTerms are the words that best tell the first FeedbackDocs papers
// (when the query matched that many)
// of ranked from the library: in at least two of them, weighed by the
// share of them that use the word times its inverse document frequency in
// the library (the classic Rocchio/RM-style choice). Words already in the
// query, stop words and numbers are left out.
func (s *Source) feedbackTerms(ctx context.Context, ranked []int64, queryWords []string) ([]string, error) {
	tn := s.tuning
	if len(ranked) < tn.FeedbackDocs {
		return nil, nil // too few papers to tell what they share from chance
	}
	top := ranked[:tn.FeedbackDocs]
	papers, err := s.lib.LibraryPapersByDoc(ctx, top)
	if err != nil {
		return nil, err
	}
	inQuery := map[string]bool{}
	for _, w := range queryWords {
		inQuery[text.Stem(w)] = true
	}
	type cand struct {
		stem, word string
		docs       int
		weight     float64
	}
	byStem := map[string]*cand{}
	for _, p := range papers {
		seen := map[string]bool{}
		for _, t := range text.Terms(p.Title + "\n" + p.Abstract) {
			if inQuery[t.Stem] || seen[t.Stem] || len(t.Word) < 3 {
				continue
			}
			seen[t.Stem] = true
			c := byStem[t.Stem]
			if c == nil {
				c = &cand{stem: t.Stem, word: t.Word}
				byStem[t.Stem] = c
			}
			c.docs++
		}
	}
	var cands []*cand
	for _, c := range byStem {
		if c.docs >= 2 {
			cands = append(cands, c)
		}
	}
	// Ask the library's counts only for the words most of the papers
	// share: a word in few of them cannot outweigh one in most.
	slices.SortFunc(cands, func(a, b *cand) int {
		if c := cmp.Compare(b.docs, a.docs); c != 0 {
			return c
		}
		return cmp.Compare(a.stem, b.stem)
	})
	cands = cands[:min(len(cands), 4*tn.FeedbackTerms)]
	if len(cands) == 0 {
		return nil, nil
	}
	words := make([]string, len(cands))
	for i, c := range cands {
		words[i] = c.word
	}
	n, df, err := s.lib.LibraryDocFreqs(ctx, words)
	if err != nil {
		return nil, err
	}
	for i, c := range cands {
		if df[i] == 0 {
			continue
		}
		c.weight = float64(c.docs) / float64(len(papers)) * math.Log(float64(n)/float64(df[i]))
	}
	slices.SortFunc(cands, func(a, b *cand) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.stem, b.stem)
	})
	var out []string
	for _, c := range cands[:min(len(cands), tn.FeedbackTerms)] {
		if c.weight > 0 {
			out = append(out, c.word)
		}
	}
	return out, nil
}
