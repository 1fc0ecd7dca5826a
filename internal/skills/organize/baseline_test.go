package organize

import (
	"cmp"
	"slices"
	"strings"

	"quarry/internal/research"
	"quarry/internal/skills/text"
)

// BaselineLabels names groups as the organizer did before labels were
// chosen by in-group against out-of-group contrast (commit 7bb7db5): the
// terms weighing most in the group's TF-IDF centroid minus the
// collection's, stems shown as their commonest word. TestDemoLabels
// prints it beside the current label so a change of labeller can be
// judged on the same groups.
func BaselineLabels(papers []research.ScoredPaper, groups []research.Group) []string {
	surface := map[string]map[string]int{}
	feats := make([][]string, len(papers))
	index := map[string]int{}
	for i, p := range papers {
		index[p.ID] = i
		var stems []string
		for _, t := range text.Terms(p.Title + "\n" + p.Abstract) {
			stems = append(stems, t.Stem)
			if surface[t.Stem] == nil {
				surface[t.Stem] = map[string]int{}
			}
			surface[t.Stem][t.Word]++
		}
		feats[i] = text.WithBigrams(stems)
	}
	minDF := 1
	if len(papers) >= 20 {
		minDF = 2
	}
	tf := text.NewTFIDF(feats, text.TFIDFOptions{Sublinear: true, MinDF: minDF})
	vecs := make([]text.Vector, len(papers))
	all := make([]int, len(papers))
	for i := range papers {
		vecs[i] = tf.Vector(feats[i])
		all[i] = i
	}
	global := centroid(vecs, all, tf.Dim())
	var out []string
	for _, g := range groups {
		var m []int
		for _, id := range g.PaperIDs {
			m = append(m, index[id])
		}
		var base []float64
		if len(groups) > 1 {
			base = global
		}
		out = append(out, baselineLabel(centroid(vecs, m, tf.Dim()), base, tf, surface))
	}
	return out
}

func baselineLabel(cen, base []float64, tf *text.TFIDF, surface map[string]map[string]int) string {
	type cand struct {
		f int32
		w float64
	}
	var cands []cand
	for f, x := range cen {
		if x <= 0 {
			continue
		}
		w := x
		if base != nil {
			w -= base[f]
		}
		if strings.Contains(tf.Term(int32(f)), " ") {
			w *= 1.2 // a phrase reads better than two loose words
		}
		cands = append(cands, cand{int32(f), w})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if s := cmp.Compare(b.w, a.w); s != 0 {
			return s
		}
		return cmp.Compare(tf.Term(a.f), tf.Term(b.f))
	})
	var words []string
	have := map[string]bool{}
	for _, c := range cands {
		stems := strings.Fields(tf.Term(c.f))
		if slices.ContainsFunc(stems, func(s string) bool { return have[s] }) {
			continue
		}
		if wordCount(words)+len(stems) > 4 {
			continue
		}
		var part []string
		for _, s := range stems {
			have[s] = true
			part = append(part, surfaceWord(s, surface))
		}
		words = append(words, strings.Join(part, " "))
		if wordCount(words) >= 3 {
			break
		}
	}
	if len(words) == 0 {
		return "Other papers"
	}
	return strings.Join(words, ", ")
}

func wordCount(parts []string) int {
	n := 0
	for _, p := range parts {
		n += len(strings.Fields(p))
	}
	return n
}

// surfaceWord is the word most often written for stem (ties: the shorter,
// then alphabetical), because stems like "failur" are not for people.
func surfaceWord(stem string, surface map[string]map[string]int) string {
	best, bestN := stem, -1
	for w, n := range surface[stem] {
		if n > bestN || (n == bestN && (len(w) < len(best) || (len(w) == len(best) && w < best))) {
			best, bestN = w, n
		}
	}
	return best
}
