package local

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/skills/text"
)

// RRFK is reciprocal rank fusion's constant: a paper at rank r of a list
// scores 1/(RRFK+r). 60 is the value of Cormack, Clarke and Büttcher
// (SIGIR 2009), the one hybrid search engines use; it was not tuned here.
const RRFK = 60

// SemanticCandidates is how many nearest papers the semantic list holds.
// It does not grow with the page asked for, so every page of a search
// fuses the same two lists and pages neither repeat nor skip a paper.
const SemanticCandidates = 300

// hybrid fuses the word ranking with the papers nearest in meaning to the
// query's and the question's words, by reciprocal rank, so a paper that
// shares no word with the query but is about the same thing is found.
// Without a Semantic, or when it has nothing to offer (no vectors yet, the
// embeddings server down), the word ranking is returned as it is: a search
// never waits for or fails because of embeddings. A nearest paper matching
// an excluded term is left out, as the word ranking leaves it out.
func (s *Source) hybrid(ctx context.Context, words []int64, queryWords []string, excluded []query.Clause, years research.YearRange) ([]int64, error) {
	if s.semantic == nil || len(queryWords) == 0 {
		return words, nil
	}
	near, err := s.semantic.Nearest(ctx, strings.Join(queryWords, " "), years, SemanticCandidates)
	if err != nil || len(near) == 0 {
		return words, nil // embeddings are an extra, never a reason to fail a search
	}
	pos := make(map[int64]int, len(words))
	for i, d := range words {
		pos[d] = i
	}
	if near, err = s.withoutExcluded(ctx, near, pos, excluded); err != nil {
		return nil, err
	}
	score := make(map[int64]float64, len(words)+len(near))
	for i, d := range words {
		score[d] += 1 / float64(RRFK+i+1)
	}
	for i, d := range near {
		score[d] += 1 / float64(RRFK+i+1)
	}
	out := make([]int64, 0, len(score))
	for d := range score {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b int64) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		pa, oka := pos[a]
		pb, okb := pos[b]
		switch {
		case oka && okb:
			return cmp.Compare(pa, pb)
		case oka != okb: // the word ranking's papers first
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	return out, nil
}

// withoutExcluded drops from near the papers the word ranking did not
// rank that mention an excluded term in their title, abstract, authors or
// venue (stem by stem, as the full-text index matches them).
func (s *Source) withoutExcluded(ctx context.Context, near []int64, ranked map[int64]int, excluded []query.Clause) ([]int64, error) {
	var phrases [][]string
	for _, c := range excluded {
		for _, t := range c.Any {
			var stems []string
			for _, w := range text.Words(t.Text) {
				stems = append(stems, text.Stem(w))
			}
			if len(stems) > 0 {
				phrases = append(phrases, stems)
			}
		}
	}
	if len(phrases) == 0 {
		return near, nil
	}
	var check []int64
	for _, d := range near {
		if _, ok := ranked[d]; !ok {
			check = append(check, d)
		}
	}
	papers, err := s.lib.LibraryPapersByDoc(ctx, check)
	if err != nil {
		return nil, err
	}
	if len(papers) != len(check) {
		// A paper was deleted since it was embedded: match them one by one.
		papers = papers[:0]
		var kept []int64
		for _, d := range check {
			ps, err := s.lib.LibraryPapersByDoc(ctx, []int64{d})
			if err != nil {
				return nil, err
			}
			if len(ps) == 1 {
				papers, kept = append(papers, ps[0]), append(kept, d)
			}
		}
		gone := map[int64]bool{}
		for _, d := range check {
			gone[d] = !slices.Contains(kept, d)
		}
		near = slices.DeleteFunc(near, func(d int64) bool { return gone[d] })
		check = kept
	}
	drop := map[int64]bool{}
	for i, p := range papers {
		var stems []string
		for _, w := range text.Words(p.Title + "\n" + p.Abstract + "\n" + strings.Join(p.Authors, "\n") + "\n" + p.Venue) {
			stems = append(stems, text.Stem(w))
		}
		for _, ph := range phrases {
			if containsRun(stems, ph) {
				drop[check[i]] = true
			}
		}
	}
	return slices.DeleteFunc(near, func(d int64) bool { return drop[d] }), nil
}

// containsRun reports whether run occurs in s, consecutively.
func containsRun(s, run []string) bool {
	for i := 0; i+len(run) <= len(s); i++ {
		if slices.Equal(s[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
