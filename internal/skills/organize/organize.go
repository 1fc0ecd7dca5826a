// Package organize is the offline result organizer (skill 6): it clusters
// a collection's papers into themes by spherical k-means over TF-IDF
// vectors and labels each theme with its most distinctive terms, so a
// researcher can skim a few labelled groups instead of one long list.
package organize

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/text"
)

// MaxGroups caps the number of themes: beyond this a list of groups is as
// hard to skim as the list of papers.
const MaxGroups = 8

// Organizer is the offline skills.Organizer. The zero value is ready to use.
type Organizer struct{}

var _ skills.Organizer = Organizer{}

// Organize puts every paper in exactly one labelled group, papers sorted by
// score (then ID) within each group, groups ordered by their best paper.
// The result depends only on the input, so a page reload shows the same
// groups.
func (Organizer) Organize(ctx context.Context, papers []skills.ScoredPaper) ([]skills.Group, error) {
	if err := ctx.Err(); err != nil {
		return nil, engine.Errorf(engine.EInternal, "organize: %v", err)
	}
	groups := []skills.Group{}
	if len(papers) == 0 {
		return groups, nil
	}
	surface := map[string]map[string]int{}
	feats := make([][]string, len(papers))
	for i, p := range papers {
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
	for i := range papers {
		vecs[i] = tf.Vector(feats[i])
	}
	assign := kmeans(vecs, numGroups(len(papers)), papers, tf.Dim())

	members := map[int][]int{}
	var ids []int
	for i, c := range assign {
		if _, ok := members[c]; !ok {
			ids = append(ids, c)
		}
		members[c] = append(members[c], i)
	}
	global := centroid(vecs, allIdx(len(vecs)), tf.Dim())
	used := map[string]int{}
	for _, c := range ids {
		m := members[c]
		slices.SortStableFunc(m, func(a, b int) int {
			if s := cmp.Compare(papers[b].Score, papers[a].Score); s != 0 {
				return s
			}
			return cmp.Compare(papers[a].ID, papers[b].ID)
		})
		var base []float64
		if len(ids) > 1 {
			base = global
		}
		label := labelFor(centroid(vecs, m, tf.Dim()), base, tf, surface)
		used[label]++
		if used[label] > 1 {
			label += " (" + strconv.Itoa(used[label]) + ")"
		}
		g := skills.Group{Label: label}
		for _, i := range m {
			g.PaperIDs = append(g.PaperIDs, papers[i].ID)
		}
		groups = append(groups, g)
	}
	best := func(g skills.Group) float64 {
		p, _ := skills.PaperCollection{Papers: papers}.Paper(g.PaperIDs[0])
		return p.Score
	}
	slices.SortStableFunc(groups, func(a, b skills.Group) int {
		if s := cmp.Compare(best(b), best(a)); s != 0 {
			return s
		}
		return cmp.Compare(len(b.PaperIDs), len(a.PaperIDs))
	})
	return groups, nil
}

// numGroups grows with the square root of the collection: about sqrt(n/2)
// themes, one group for three papers or fewer.
func numGroups(n int) int {
	if n <= 3 {
		return 1
	}
	k := int(math.Round(math.Sqrt(float64(n) / 2)))
	return max(1, min(k, MaxGroups))
}

// kmeans is spherical k-means with farthest-first seeding from the
// best-scored paper, so the same papers always give the same clusters.
func kmeans(vecs []text.Vector, k int, papers []skills.ScoredPaper, dim int) []int {
	n := len(vecs)
	assign := make([]int, n)
	if k <= 1 {
		return assign
	}
	first := 0
	for i := range papers {
		if papers[i].Score > papers[first].Score {
			first = i
		}
	}
	seeds := []int{first}
	closest := make([]float64, n)
	for i := range vecs {
		closest[i] = vecs[i].Dot(vecs[first])
	}
	for len(seeds) < k {
		next := -1
		for i := range vecs {
			if slices.Contains(seeds, i) || vecs[i].Len() == 0 {
				continue
			}
			if next < 0 || closest[i] < closest[next] {
				next = i
			}
		}
		if next < 0 {
			break
		}
		seeds = append(seeds, next)
		for i := range vecs {
			closest[i] = max(closest[i], vecs[i].Dot(vecs[next]))
		}
	}
	cents := make([][]float64, len(seeds))
	for c, s := range seeds {
		cents[c] = centroid(vecs, []int{s}, dim)
	}
	for i := range assign {
		assign[i] = -1
	}
	for range 25 {
		changed := false
		for i, v := range vecs {
			best, bestSim := 0, math.Inf(-1)
			for c, cen := range cents {
				if s := v.DotDense(cen); s > bestSim {
					best, bestSim = c, s
				}
			}
			if assign[i] != best {
				assign[i] = best
				changed = true
			}
		}
		if !changed {
			break
		}
		for c := range cents {
			var m []int
			for i, a := range assign {
				if a == c {
					m = append(m, i)
				}
			}
			if len(m) > 0 {
				cents[c] = centroid(vecs, m, dim)
			}
		}
	}
	return assign
}

// centroid is the mean of the member vectors, scaled to unit length.
func centroid(vecs []text.Vector, members []int, dim int) []float64 {
	c := make([]float64, dim)
	for _, i := range members {
		vecs[i].AddTo(c, 1)
	}
	var norm float64
	for _, x := range c {
		norm += x * x
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for f := range c {
			c[f] /= norm
		}
	}
	return c
}

func allIdx(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// labelFor names a group by the terms that weigh most in its centroid
// compared with the whole collection (base, nil for a single group): two to
// four words, a bigram preferred over its parts, each stem shown as the
// word most often written for it.
func labelFor(cen, base []float64, tf *text.TFIDF, surface map[string]map[string]int) string {
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
