package relevance

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/text"
)

// similarCosine is the TF-IDF cosine above which two papers are called
// similar in a reason; below it the overlap is mostly common vocabulary.
const similarCosine = 0.25

// Scorer is the offline skills.Scorer. The zero value is ready to use; it
// holds no state, so one Scorer serves every run.
type Scorer struct{}

var _ skills.Scorer = Scorer{}

// Score scores in.Papers in [0,1] with reasons. Marked papers that are not
// among in.Papers still train the classifier, because marks accumulate
// across iterations while each search returns a new set of papers.
func (Scorer) Score(ctx context.Context, in skills.ScoreInput) ([]research.ScoredPaper, error) {
	if err := ctx.Err(); err != nil {
		return nil, fault.Errorf(fault.EInternal, "relevance: %v", err)
	}
	all := make([]research.RawPaper, 0, len(in.Papers)+len(in.Relevant)+len(in.Irrelevant))
	pos := map[string]int{}
	add := func(p research.RawPaper) int {
		if i, ok := pos[p.ID]; ok && p.ID != "" {
			return i
		}
		all = append(all, p)
		pos[p.ID] = len(all) - 1
		return len(all) - 1
	}
	own := make([]int, len(in.Papers))
	for k, p := range in.Papers {
		own[k] = add(p)
	}
	var rel, irr []int
	for _, p := range in.Relevant {
		rel = append(rel, add(p))
	}
	for _, p := range in.Irrelevant {
		i := add(p)
		if !slices.Contains(rel, i) {
			irr = append(irr, i)
		}
	}
	x := NewIndex(in.Intent, all)
	scores := x.Rank(rel, irr)
	out := make([]research.ScoredPaper, len(in.Papers))
	for k, p := range in.Papers {
		i := own[k]
		out[k] = research.ScoredPaper{RawPaper: p, Score: scores[i], Reasons: x.reasons(i, rel, irr)}
	}
	return out, nil
}

// reasons explains paper i's score in words a researcher can check: which
// of their terms it matches and where, how many of their marked papers it
// resembles, and which excluded terms it contains.
func (x *Index) reasons(i int, rel, irr []int) []string {
	var out []string
	d := x.docs[i]
	const maxMatches = 3
	n := 0
	seen := map[string]bool{}
	for _, ph := range x.displayPhrases() {
		if n == maxMatches {
			break
		}
		key := fmt.Sprint(ph.stems)
		if seen[key] {
			continue
		}
		switch {
		case d.title.contains(ph.stems):
			out = append(out, fmt.Sprintf("matches %q in title", ph.text))
		case d.abstract.contains(ph.stems):
			out = append(out, fmt.Sprintf("matches %q in abstract", ph.text))
		default:
			continue
		}
		seen[key] = true
		n++
	}
	if c := x.similarCount(i, rel); c > 0 {
		out = append(out, fmt.Sprintf("similar to %d %s you marked relevant", c, plural(c, "paper", "papers")))
	}
	if c := x.similarCount(i, irr); c > 0 {
		out = append(out, fmt.Sprintf("resembles %d %s you marked irrelevant", c, plural(c, "paper", "papers")))
	}
	for _, e := range x.excluded[i] {
		out = append(out, fmt.Sprintf("contains excluded term %q", e))
	}
	if len(out) == 0 {
		out = append(out, "no terms of the question in title or abstract")
	}
	return out
}

// displayPhrases are the intent's terms as the researcher wrote them, most
// specific first: concepts and synonyms, include terms, then single words
// of the topic (not those of its exclusions).
func (x *Index) displayPhrases() []phrase {
	var terms []string
	for _, c := range x.intent.Concepts {
		terms = append(terms, c.Term)
		terms = append(terms, c.Synonyms...)
	}
	terms = append(terms, x.intent.IncludeTerms...)
	out := phrases(terms)
	var words []phrase
	for _, t := range text.Terms(wantedTopic(x.intent)) {
		words = append(words, phrase{text: t.Word, stems: []string{t.Stem}})
	}
	// Rarer words say more about why a paper matched.
	slices.SortStableFunc(words, func(a, b phrase) int {
		return cmp.Compare(x.tfidf.IDF(b.stems[0]), x.tfidf.IDF(a.stems[0]))
	})
	return append(out, words...)
}

func (x *Index) similarCount(i int, marked []int) int {
	n := 0
	for _, j := range marked {
		if j != i && x.docs[i].vec.Dot(x.docs[j].vec) >= similarCosine {
			n++
		}
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
