// Package dedup is the deduplicator skill: it merges records of the same
// paper found in several sources and marks versions of one work (a preprint
// and its publication, two works under one DOI) as related instead.
//
// Records are linked by exact identifiers (DOI, PMID, arXiv ID) and then by
// a conservative fuzzy match on normalised title, year and authors, with
// volume, first page and venue as vetoes when both records have them.
// Candidate pairs come from blocking keys (title prefix, title suffix,
// first author + year, identifiers), so the cost grows near-linearly.
package dedup

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"quarry/internal/research"
	"quarry/internal/skills"
)

// Deduplicator is the offline, heuristic skills.Deduplicator. The zero
// value is ready to use; it holds no state between calls.
type Deduplicator struct{}

var _ skills.Deduplicator = Deduplicator{}

// New returns a Deduplicator, for symmetry with the other skills' wiring.
func New() Deduplicator { return Deduplicator{} }

// Dedup merges duplicate records, keeping the richest metadata of each
// cluster, and fills Related on both sides of every version pair.
func (Deduplicator) Dedup(ctx context.Context, papers []research.RawPaper) ([]research.RawPaper, research.DedupStats, error) {
	a, err := Analyze(ctx, papers)
	if err != nil {
		return nil, research.DedupStats{}, err
	}
	out, stats := Merge(papers, a)
	return out, stats, nil
}

// Merge builds one record per cluster of a (see Analyze) and links related
// clusters by ID. Exposed so a command can show the analysis, let a person
// veto links, and merge what remains.
func Merge(papers []research.RawPaper, a Analysis) ([]research.RawPaper, research.DedupStats) {
	out := make([]research.RawPaper, len(a.Clusters))
	clusterOf := make([]int, len(papers))
	taken := make(map[string]bool, len(a.Clusters))
	inputID := map[string]string{} // input ID -> output ID, for carried-over Related
	for c, members := range a.Clusters {
		m := mergeCluster(papers, members)
		id := research.StableID(m)
		if taken[id] {
			// Two works kept apart can share a DOI; IDs must stay unique.
			id = cmp.Or(papers[members[0]].ID, id)
			for k := 2; taken[id]; k++ {
				id = research.StableID(m) + "~" + strconv.Itoa(k)
			}
		}
		taken[id] = true
		m.ID = id
		out[c] = m
		for _, i := range members {
			clusterOf[i] = c
			if papers[i].ID != "" {
				inputID[papers[i].ID] = id
			}
		}
	}
	stats := research.DedupStats{Input: len(papers), Output: len(out), Merged: len(papers) - len(out), Related: len(a.Related)}
	for c := range out {
		var rel []string
		for _, r := range out[c].Related {
			rel = append(rel, cmp.Or(inputID[r], r))
		}
		out[c].Related = rel
	}
	for _, l := range a.Related {
		ca, cb := clusterOf[l.A], clusterOf[l.B]
		out[ca].Related = append(out[ca].Related, out[cb].ID)
		out[cb].Related = append(out[cb].Related, out[ca].ID)
	}
	for c := range out {
		r := out[c].Related
		slices.Sort(r)
		r = slices.Compact(r)
		r = slices.DeleteFunc(r, func(id string) bool { return id == out[c].ID })
		if len(r) == 0 {
			r = nil
		}
		out[c].Related = r
	}
	return out, stats
}

// mergeCluster keeps the richest record as the base and fills its gaps from
// the others: longest abstract, most authors, any identifier, every source.
func mergeCluster(papers []research.RawPaper, members []int) research.RawPaper {
	best := members[0]
	for _, i := range members[1:] {
		if richness(papers[i]) > richness(papers[best]) {
			best = i
		}
	}
	m := papers[best]
	m.Authors = slices.Clone(m.Authors)
	m.AuthorNames = slices.Clone(m.AuthorNames)
	m.Related = nil
	var sources, related []string
	for _, i := range members {
		p := papers[i]
		if len(p.Abstract) > len(m.Abstract) {
			m.Abstract = p.Abstract
		}
		if len(p.Authors) > len(m.Authors) {
			// The split travels with the list it splits.
			m.Authors, m.AuthorNames = slices.Clone(p.Authors), slices.Clone(p.AuthorNames)
		}
		m.DOI = cmp.Or(m.DOI, p.DOI)
		m.ArxivID = cmp.Or(m.ArxivID, p.ArxivID)
		m.PMID = cmp.Or(m.PMID, p.PMID)
		m.Venue = cmp.Or(m.Venue, p.Venue)
		m.Volume = cmp.Or(m.Volume, p.Volume)
		m.Issue = cmp.Or(m.Issue, p.Issue)
		m.Pages = cmp.Or(m.Pages, p.Pages)
		m.URL = cmp.Or(m.URL, p.URL)
		if m.Year == 0 {
			m.Year = p.Year
		}
		if p.Rank > 0 && (m.Rank == 0 || p.Rank < m.Rank) {
			m.Rank = p.Rank
		}
		if p.Source != "" {
			sources = append(sources, p.Source)
		}
		sources = append(sources, p.Sources...)
		related = append(related, p.Related...)
	}
	m.Sources = uniqueInOrder(sources)
	m.Related = related
	return m
}

// richness counts filled metadata fields, so the base record of a merge is
// the one that needs the least patching.
func richness(p research.RawPaper) int {
	n := len(p.Authors)
	for _, s := range []string{p.DOI, p.ArxivID, p.PMID, p.Venue, p.Volume, p.Issue, p.Pages, p.Abstract, p.URL} {
		if s != "" {
			n += 2
		}
	}
	if p.Year != 0 {
		n += 2
	}
	return n
}

func uniqueInOrder(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(xs))
	out := xs[:0:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// DedupAgainst deduplicates papers, records found after known were kept
// (a review's next page, "Show more"): it analyses them together, drops
// every paper that falls into a cluster with a known record, and merges
// the rest among themselves. Only papers' own records come back; a
// version link to a known record is left out, since known is not
// rewritten. Stats count papers alone (Merged includes those dropped as
// already known).
func (Deduplicator) DedupAgainst(ctx context.Context, known, papers []research.RawPaper) ([]research.RawPaper, research.DedupStats, error) {
	all := append(slices.Clone(known), papers...)
	a, err := Analyze(ctx, all)
	if err != nil {
		return nil, research.DedupStats{}, err
	}
	k := len(known)
	var sub Analysis
	index := map[int]int{} // index in all → index in papers
	for _, members := range a.Clusters {
		if members[0] < k { // members ascend: the first is known
			continue
		}
		c := make([]int, len(members))
		for j, m := range members {
			c[j] = m - k
			index[m] = m - k
		}
		sub.Clusters = append(sub.Clusters, c)
	}
	for _, l := range a.Related {
		ia, oka := index[l.A]
		ib, okb := index[l.B]
		if oka && okb {
			l.A, l.B = ia, ib
			sub.Related = append(sub.Related, l)
		}
	}
	out, stats := Merge(papers, sub)
	stats.Input, stats.Merged = len(papers), len(papers)-len(out)
	return out, stats, nil
}
