// Package organize is the offline result organizer (skill 6): it clusters
// a collection's papers into themes by spherical k-means over TF-IDF
// vectors and labels each theme with the words and phrases that set it
// apart from the others (label.go), so a researcher can skim a few
// labelled groups instead of one long list.
package organize

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"

	"quarry/internal/fault"
	"quarry/internal/research"
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
func (Organizer) Organize(ctx context.Context, papers []research.ScoredPaper) ([]research.Group, error) {
	if err := ctx.Err(); err != nil {
		return nil, fault.Errorf(fault.EInternal, "organize: %v", err)
	}
	groups := []research.Group{}
	if len(papers) == 0 {
		return groups, nil
	}
	feats := make([][]string, len(papers))
	for i, p := range papers {
		feats[i] = text.WithBigrams(text.Tokenize(p.Title + "\n" + p.Abstract))
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
	type group struct {
		members []int
		best    float64
	}
	var gs []group
	for _, c := range ids {
		m := members[c]
		slices.SortStableFunc(m, func(a, b int) int {
			if s := cmp.Compare(papers[b].Score, papers[a].Score); s != 0 {
				return s
			}
			return cmp.Compare(papers[a].ID, papers[b].ID)
		})
		gs = append(gs, group{members: m, best: papers[m[0]].Score})
	}
	slices.SortStableFunc(gs, func(a, b group) int {
		if s := cmp.Compare(b.best, a.best); s != 0 {
			return s
		}
		return cmp.Compare(len(b.members), len(a.members))
	})
	// Groups are labelled best first, so the best group gets the terms
	// it shares with another and the other is named by what sets it apart.
	lab := newLabeler(papers)
	taken := map[string]bool{}
	used := map[string]int{}
	for _, gr := range gs {
		label, keys := lab.label(gr.members, taken)
		for _, k := range keys {
			taken[k] = true
		}
		used[label]++
		if used[label] > 1 {
			label += " (" + strconv.Itoa(used[label]) + ")"
		}
		g := research.Group{Label: label}
		for _, i := range gr.members {
			g.PaperIDs = append(g.PaperIDs, papers[i].ID)
		}
		groups = append(groups, g)
	}
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
func kmeans(vecs []text.Vector, k int, papers []research.ScoredPaper, dim int) []int {
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
