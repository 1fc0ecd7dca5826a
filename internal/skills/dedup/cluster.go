package dedup

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"quarry/internal/research"
	"slices"
	"strconv"
	"strings"
)

// Link is one decision between two input records, kept so that a
// systematic reviewer can audit every merge and every "related" mark.
type Link struct {
	// A and B index the input slice; A < B.
	A, B   int
	Reason Reason
	// Score is the title similarity in [0,1] (1 for identifier matches).
	Score float64
	// Detail is the evidence in words, e.g. "title 0.962, year gap 1".
	Detail string
}

// Analysis is the full outcome of a deduplication over input indices,
// before any records are merged.
type Analysis struct {
	// Clusters partitions the input: each cluster is one paper, its members
	// ascending; clusters are ordered by their first member. Singletons are
	// included.
	Clusters [][]int
	// Merges are the links that joined records into clusters (a spanning
	// forest: len(Merges) == len(input) - len(Clusters)).
	Merges []Link
	// Related links records of different clusters that look like versions
	// of one work (preprint and publication, one DOI with two titles).
	Related []Link
}

// Blocking limits. A block (records sharing a key) of at most blockCap
// records is compared all-pairs; a larger one is sorted by title and each
// record compared with its next window neighbours, so cost stays linear
// even for "wang 2024" in a large corpus.
const (
	blockCap = 10
	window   = 8
)

// numKeys is how many blocking keys each record gets: the title's first
// four words, its last four words (a typo rarely hits both ends), first
// author + year + the title's first letter, one per identifier, and the
// first four words of a translated title (in the title-prefix blocks).
const numKeys = 7

// Clusters groups input indices into papers; see Analysis.Clusters. It is
// the entry point for tools that only need the partition.
func Clusters(papers []research.RawPaper) [][]int {
	a, _ := Analyze(context.Background(), papers)
	return a.Clusters
}

// Analyze finds duplicates and versions among papers and says why for each.
// It only fails when ctx is cancelled.
func Analyze(ctx context.Context, papers []research.RawPaper) (Analysis, error) {
	return AnalyzeWith(ctx, papers, DefaultThresholds())
}

// AnalyzeWith is Analyze with other thresholds, for the harness that
// chooses them (see Thresholds).
func AnalyzeWith(ctx context.Context, papers []research.RawPaper, th Thresholds) (Analysis, error) {
	if err := ctx.Err(); err != nil {
		return Analysis{}, fmt.Errorf("dedup: %w", err)
	}
	n := len(papers)
	feats := make([]features, n)
	for i := range papers {
		feats[i] = extract(papers[i])
	}

	seed := maphash.MakeSeed()
	keys := make([][numKeys]uint64, n)
	blocks := make(map[uint64][]int32, n*2)
	for i := range feats {
		keys[i] = blockKeys(seed, &feats[i])
		for _, k := range keys[i] {
			if k != 0 {
				blocks[k] = append(blocks[k], int32(i))
			}
		}
	}
	capped := map[uint64]bool{}
	for k, m := range blocks {
		if len(m) > blockCap {
			capped[k] = true
		}
	}

	var found []Link
	var verdicts []verdict
	try := func(i, j int32, slot int) {
		// Compare a pair only in the first fully compared block it shares.
		ki, kj := &keys[i], &keys[j]
		for s := 0; s < slot; s++ {
			if ki[s] != 0 && ki[s] == kj[s] && !capped[ki[s]] {
				return
			}
		}
		a, b := int(min(i, j)), int(max(i, j))
		d := compare(&feats[a], &feats[b], &th)
		if d.verdict == distinct {
			return
		}
		found = append(found, Link{A: a, B: b, Reason: d.reason, Score: d.score, Detail: d.detail})
		verdicts = append(verdicts, d.verdict)
	}

	count := 0
	// Each block is handled once, at the first slot that reaches it: a
	// translated title's key shares the title-prefix blocks, so a block's
	// first member may hold its key in another slot.
	handled := map[uint64]bool{}
	for slot := range numKeys {
		for i := range feats {
			k := keys[i][slot]
			if k == 0 {
				continue
			}
			m := blocks[k]
			if len(m) < 2 || handled[k] {
				continue
			}
			handled[k] = true
			if count++; count%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return Analysis{}, fmt.Errorf("dedup: %w", err)
				}
			}
			if len(m) <= blockCap {
				for x := range m {
					for y := x + 1; y < len(m); y++ {
						try(m[x], m[y], slot)
					}
				}
				continue
			}
			sorted := slices.Clone(m)
			slices.SortFunc(sorted, func(x, y int32) int {
				return cmp.Or(strings.Compare(feats[x].title, feats[y].title), cmp.Compare(x, y))
			})
			for x := range sorted {
				for y := x + 1; y < min(len(sorted), x+1+window); y++ {
					try(sorted[x], sorted[y], slot)
				}
			}
		}
	}
	return resolve(n, feats, found, verdicts), nil
}

// blockKeys returns the record's blocking keys by slot; 0 means none.
func blockKeys(seed maphash.Seed, f *features) [numKeys]uint64 {
	var k [numKeys]uint64
	h := func(tag, s string) uint64 {
		if s == "" {
			return 0
		}
		return maphash.String(seed, tag+s) | 1
	}
	toks := strings.Fields(f.title)
	if len(toks) > 0 {
		k[0] = h("p|", strings.Join(toks[:min(4, len(toks))], " "))
		k[1] = h("s|", strings.Join(toks[max(0, len(toks)-4):], " "))
	}
	if len(f.surnames) > 0 && f.title != "" {
		// The title's first letter keeps "wang 2024" blocks small; a title
		// mangled at both ends and in its first letter is rare.
		k[2] = h("a|", f.surnames[0].last+"|"+strconv.Itoa(f.year)+"|"+f.title[:1])
	}
	k[3] = h("d|", f.doi)
	k[4] = h("m|", f.pmid)
	k[5] = h("x|", f.arxiv)
	if f.alt == nil {
		return k
	}
	if alt := strings.Fields(f.alt.title); len(alt) > 0 {
		k[6] = h("p|", strings.Join(alt[:min(4, len(alt))], " "))
	}
	return k
}

// clusterInfo is what union-find knows about a growing cluster, so that a
// chain of individually plausible links cannot join records that
// contradict each other.
type clusterInfo struct {
	doi, pmid, arxiv    string
	preprint, published bool
}

func (c *clusterInfo) conflicts(o *clusterInfo) bool {
	return conflict(c.doi, o.doi) || conflict(c.pmid, o.pmid) || conflict(c.arxiv, o.arxiv) ||
		c.preprint && o.published || c.published && o.preprint
}

func (c *clusterInfo) absorb(o *clusterInfo) {
	c.doi = cmp.Or(c.doi, o.doi)
	c.pmid = cmp.Or(c.pmid, o.pmid)
	c.arxiv = cmp.Or(c.arxiv, o.arxiv)
	c.preprint = c.preprint || o.preprint
	c.published = c.published || o.published
}

// placesClash reports whether any record of one cluster contradicts any
// of the other's in a way no single link would have been allowed: another
// volume, issue, kind, distant pages, years two apart, or two journals at
// two places, unless the two share an identifier. A record without volume or pages can link to each of two
// items (a column in two issues); the two must not become one through it.
func placesClash(feats []features, x, y []int32) bool {
	for _, i := range x {
		for _, j := range y {
			a, b := &feats[i], &feats[j]
			if sharedID(a, b) {
				continue // one DOI outweighs an online-first record's pages
			}
			located := a.volume != "" && a.volume == b.volume && a.page != "" && a.page == b.page
			if conflict(a.volume, b.volume) || a.kind != b.kind ||
				a.issueLo != 0 && b.issueLo != 0 && (a.issueHi < b.issueLo || b.issueHi < a.issueLo) ||
				conflict(a.page, b.page) && !pagesNoisy(a, b) ||
				a.year != 0 && b.year != 0 && abs(a.year-b.year) > 1 ||
				!located && !venuesCompatible(a.venue, b.venue) {
				return true
			}
		}
	}
	return false
}

// agreement counts the fields both records have and agree on.
func agreement(a, b *features) int {
	n := 0
	for _, f := range [...][2]string{{a.volume, b.volume}, {a.page, b.page}, {a.venue, b.venue}, {a.doi, b.doi}, {a.pmid, b.pmid}} {
		if f[0] != "" && f[0] == f[1] {
			n++
		}
	}
	if a.issueLo != 0 && a.issueLo == b.issueLo {
		n++
	}
	if a.year != 0 && a.year == b.year {
		n++
	}
	if len(a.surnames) > 0 && len(b.surnames) > 0 && a.surnames[0] == b.surnames[0] {
		n++
	}
	return n
}

// contentKey orders records by what they say, not where they stand.
func contentKey(f *features) string {
	var b strings.Builder
	b.WriteString(f.title)
	alt := ""
	if f.alt != nil {
		alt = f.alt.title
	}
	for _, s := range []string{alt, strconv.Itoa(f.year), f.volume, strconv.Itoa(f.issueLo), f.page, f.venue, f.doi, f.pmid, f.arxiv, f.kind} {
		b.WriteByte('|')
		b.WriteString(s)
	}
	for _, n := range f.surnames {
		b.WriteByte('|')
		b.WriteString(n.compact)
	}
	return b.String()
}

func sharedID(a, b *features) bool {
	return a.doi != "" && a.doi == b.doi || a.pmid != "" && a.pmid == b.pmid || a.arxiv != "" && a.arxiv == b.arxiv
}

// resolve unions duplicate links, strongest first (identifiers, then fuzzy
// by score), refusing unions that would put contradicting records together.
func resolve(n int, feats []features, found []Link, verdicts []verdict) Analysis {
	parent := make([]int32, n)
	info := make([]clusterInfo, n)
	for i := range parent {
		parent[i] = int32(i)
		f := &feats[i]
		info[i] = clusterInfo{doi: f.doi, pmid: f.pmid, arxiv: f.arxiv, preprint: f.preprint, published: f.published}
	}
	// members lists each root's records, so a union can check that no two
	// records it would join contradict each other; nil stands for the root
	// alone, so singletons cost nothing.
	members := make([][]int32, n)
	of := func(r int32) []int32 {
		if members[r] == nil {
			return []int32{r}
		}
		return members[r]
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}

	order := make([]int, len(found))
	for i := range order {
		order[i] = i
	}
	rank := func(l Link) int {
		if l.Reason == Fuzzy {
			return 1
		}
		return 0
	}
	// Where two links cannot both be taken (their records clash), the one
	// with more agreeing fields goes first, then the one between records
	// that sort first by content: the outcome does not depend on the
	// input's order.
	agree := make([]int, len(found))
	pair := make([][2]string, len(found))
	for i, l := range found {
		agree[i] = agreement(&feats[l.A], &feats[l.B])
		ka, kb := contentKey(&feats[l.A]), contentKey(&feats[l.B])
		pair[i] = [2]string{min(ka, kb), max(ka, kb)}
	}
	slices.SortFunc(order, func(x, y int) int {
		lx, ly := found[x], found[y]
		return cmp.Or(cmp.Compare(rank(lx), rank(ly)), cmp.Compare(ly.Score, lx.Score), cmp.Compare(agree[y], agree[x]),
			strings.Compare(pair[x][0], pair[y][0]), strings.Compare(pair[x][1], pair[y][1]),
			cmp.Compare(lx.A, ly.A), cmp.Compare(lx.B, ly.B))
	})

	var out Analysis
	var rel []Link
	for _, idx := range order {
		l := found[idx]
		if verdicts[idx] == related {
			rel = append(rel, l)
			continue
		}
		ra, rb := find(int32(l.A)), find(int32(l.B))
		if ra == rb {
			continue
		}
		if info[ra].conflicts(&info[rb]) {
			ia, ib := &info[ra], &info[rb]
			if ia.preprint && ib.published || ia.published && ib.preprint {
				l.Detail = "preprint and published version (via " + l.Detail + ")"
				rel = append(rel, l)
			}
			continue
		}
		if placesClash(feats, of(ra), of(rb)) {
			continue
		}
		if rb < ra {
			ra, rb = rb, ra
		}
		parent[rb] = ra
		info[ra].absorb(&info[rb])
		members[ra] = append(of(ra), of(rb)...)
		members[rb] = nil
		out.Merges = append(out.Merges, l)
	}

	index := make([]int, n)
	for i := range index {
		index[i] = -1
	}
	for i := range n {
		r := find(int32(i))
		if index[r] < 0 {
			index[r] = len(out.Clusters)
			out.Clusters = append(out.Clusters, nil)
		}
		out.Clusters[index[r]] = append(out.Clusters[index[r]], i)
	}

	seen := map[[2]int]bool{}
	for _, l := range rel {
		ca, cb := index[find(int32(l.A))], index[find(int32(l.B))]
		if ca == cb || seen[[2]int{min(ca, cb), max(ca, cb)}] {
			continue
		}
		seen[[2]int{min(ca, cb), max(ca, cb)}] = true
		out.Related = append(out.Related, l)
	}
	slices.SortFunc(out.Merges, func(x, y Link) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	slices.SortFunc(out.Related, func(x, y Link) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	return out
}
