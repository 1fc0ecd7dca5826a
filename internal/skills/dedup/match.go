package dedup

import (
	"fmt"
	"quarry/internal/research"
	"strings"
)

// Reason says why two records were linked, so a reviewer can check each
// decision against the rule that made it.
type Reason string

// The reasons a link can carry.
const (
	SameDOI   Reason = "same_doi"
	SamePMID  Reason = "same_pmid"
	SameArxiv Reason = "same_arxiv"
	// Fuzzy is a match on normalised title, year and authors (and volume,
	// pages and venue when both records have them).
	Fuzzy Reason = "fuzzy"
)

// verdict is the outcome of comparing two records.
type verdict int

const (
	distinct verdict = iota
	related          // versions of one work, deliberately kept apart
	duplicate
)

// Thresholds of the fuzzy matcher. They are deliberately strict: a missed
// duplicate costs a reviewer one extra line, a false merge loses a paper.
const (
	// minTitleSim is the edit-distance similarity two titles need when
	// nothing but authors and year confirms them.
	minTitleSim = 0.93
	// minTitleSimLocated is enough when volume and first page agree too.
	minTitleSimLocated = 0.85
	// minRelatedSim is the similarity for a preprint/publication pair.
	minRelatedSim = 0.90
	// differentTitleSim: below it, records sharing an identifier are
	// different works filed under one DOI (e.g. a book and its chapters).
	differentTitleSim = 0.60
	// shortTitle: titles shorter than this must match exactly.
	shortTitle = 25
)

// decision is a verdict with its reason and evidence.
type decision struct {
	verdict verdict
	reason  Reason
	score   float64
	detail  string
}

// compare decides whether records a and b are the same paper.
func compare(a, b *features) decision {
	// Exact identifiers first: they are the strongest evidence, but a shared
	// identifier with a clearly different title is a data error or a
	// book/chapter pair, and a preprint is never silently merged with its
	// publication.
	for _, id := range []struct {
		x, y   string
		reason Reason
	}{{a.doi, b.doi, SameDOI}, {a.pmid, b.pmid, SamePMID}, {a.arxiv, b.arxiv, SameArxiv}} {
		if id.x == "" || id.x != id.y {
			continue
		}
		sim := titleSim(a, b, differentTitleSim)
		switch {
		case sim < differentTitleSim && !subtitleMatch(a, b):
			return decision{related, id.reason, sim, fmt.Sprintf("same identifier, different titles (similarity %.2f)", sim)}
		case a.kind != b.kind:
			return decision{related, id.reason, sim, "same identifier, one is a " + nonEmpty(a.kind, b.kind)}
		case versionPair(a, b):
			return decision{related, id.reason, sim, "preprint and published version"}
		}
		return decision{duplicate, id.reason, 1, string(id.reason)}
	}
	return fuzzy(a, b)
}

func fuzzy(a, b *features) decision {
	// Conflicting identifiers: two different DOIs (or PMIDs, arXiv IDs) are
	// two records, however alike their titles — unless one DOI is the
	// preprint server's, which the version check below handles.
	if conflict(a.doi, b.doi) && !versionPair(a, b) || conflict(a.pmid, b.pmid) || conflict(a.arxiv, b.arxiv) {
		return reject("different identifiers")
	}
	if a.kind != b.kind {
		return reject("different kinds (erratum, reply, comment…)")
	}
	if a.roman != b.roman {
		return reject("different part numbers")
	}
	yearGap := 0
	if a.year != 0 && b.year != 0 {
		yearGap = abs(a.year - b.year)
	}
	if yearGap > 2 {
		return reject("years too far apart")
	}
	if n := max(len(a.title), len(b.title)); float64(abs(len(a.title)-len(b.title))) > (1-minTitleSimLocated)*float64(n) && !subtitleMatch(a, b) {
		return reject("titles differ")
	}
	if !authorsAgree(a.surnames, b.surnames) {
		return reject("different authors")
	}

	sim := titleSim(a, b, minTitleSimLocated)
	sub := false
	if sim < minTitleSimLocated && subtitleMatch(a, b) {
		sub, sim = true, 0.85
	}
	if !sub && a.digits != b.digits || sub && !digitsSubset(a, b) {
		return reject("different numbers in titles")
	}

	if versionPair(a, b) {
		if sim >= minRelatedSim && yearGap <= 2 {
			return decision{related, Fuzzy, sim, fmt.Sprintf("preprint and published version (title %.3f)", sim)}
		}
		return reject("preprint and publication not similar enough")
	}

	if yearGap > 1 {
		return reject("years too far apart")
	}
	// Where both records are located in a journal, the location must agree:
	// a conference abstract and the article share title and authors but not
	// volume and pages.
	venueOK := venuesCompatible(a.venue, b.venue)
	located := a.volume != "" && a.volume == b.volume && a.page != "" && a.page == b.page
	if conflict(a.volume, b.volume) {
		return reject("different volumes")
	}
	if conflict(a.page, b.page) && !(a.volume != "" && a.volume == b.volume && yearGap == 0 &&
		venueOK && min(len(a.title), len(b.title)) >= 2*shortTitle && sim >= minTitleSim) {
		// Pages are the noisiest field (e-locators, "1-6" for an online
		// article): a long, matching title in the same volume and year
		// overrides them.
		return reject("different pages")
	}
	if a.venueTyp != 0 && b.venueTyp != 0 && a.venueTyp != b.venueTyp {
		return reject("conference and journal versions")
	}
	if !venueOK && !located && isAcronym(a.venue) && isAcronym(b.venue) {
		// "ICLR" and "ICML" name two venues for sure; a full name and an
		// acronym ("Americas Conference on Information Systems", "AMCIS
		// 2017 Proceedings") may name one, so those are left to the rest.
		return reject("different venues")
	}
	if yearGap == 1 && !venueOK {
		return reject("different year and venue")
	}

	need := minTitleSim
	if located {
		need = minTitleSimLocated
	}
	short := min(len(a.title), len(b.title)) < shortTitle
	switch {
	case short && a.title != b.title:
		return reject("short titles differ")
	case short && !located && (a.generic || yearGap != 0 || !venueOK || len(a.surnames) == 0 || len(b.surnames) == 0):
		// "Editorial", "Introduction": only where they stand identifies
		// them; other short titles need the same year, authors and venue.
		return reject("short title without volume and page, year, authors or venue to confirm it")
	case sub:
		// A missing subtitle is only trusted with confirmation beyond the
		// title: same year and volume/page, or same year, venue and authors.
		if yearGap != 0 || !(located || (venueOK && len(a.surnames) > 0 && len(b.surnames) > 0)) {
			return reject("subtitle missing without volume/page or venue and authors to confirm it")
		}
	case sim < need:
		return reject("titles differ")
	}
	if len(a.surnames) == 0 || len(b.surnames) == 0 {
		// Without authors only an exact title in the same year and place counts.
		if a.title != b.title || yearGap != 0 || !venueOK {
			return reject("no authors and titles not identical")
		}
	}
	detail := fmt.Sprintf("title %.3f, year gap %d", sim, yearGap)
	if sub {
		detail = "title without subtitle, " + detail[len("title 0.850, "):]
	}
	if located {
		detail += ", same volume and page"
	}
	return decision{duplicate, Fuzzy, sim, detail}
}

func reject(why string) decision { return decision{verdict: distinct, reason: Fuzzy, detail: why} }

// versionPair reports whether one record is a preprint and the other a
// publication, which a reviewer needs to see as two linked records.
func versionPair(a, b *features) bool {
	return a.preprint && b.published || a.published && b.preprint
}

// isAcronym reports whether a normalised venue is a single word ("iclr",
// "cancer").
func isAcronym(v string) bool { return v != "" && !strings.Contains(v, " ") }

func conflict(x, y string) bool { return x != "" && y != "" && x != y }

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// titleSim is the edit-distance similarity of two normalised titles, or 0
// when it is below floor (computing only what floor needs keeps it cheap).
func titleSim(a, b *features, floor float64) float64 {
	return similarity(a.title, b.title, floor)
}

// subtitleMatch reports whether one title is the other minus its subtitle
// ("Unilateral neglect in stroke" / "…: a comparative study").
func subtitleMatch(a, b *features) bool {
	if a.title == b.title {
		return true
	}
	short, long := a, b
	if len(short.title) > len(long.title) {
		short, long = long, short
	}
	if len(short.title) < shortTitle || strings.Count(short.title, " ") < 2 {
		return false
	}
	for _, p := range long.prefixes {
		if p == short.title {
			return true
		}
	}
	return false
}

func digitsSubset(a, b *features) bool {
	short, long := a.digits, b.digits
	if len(short) > len(long) {
		short, long = long, short
	}
	return strings.HasPrefix(long, short)
}

// authorsAgree reports whether two author lists may be the same: the first
// surnames match, or one list's first author is among the other's first
// three (databases reorder or drop group authors), or most co-authors
// match (the first name garbled: "Xi, L F" / "Long, F X"). Missing lists
// agree.
func authorsAgree(a, b []name) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	if surnameEq(a[0], b[0]) {
		return true
	}
	if len(a) >= 3 && len(b) >= 3 {
		shared := 0
		for _, x := range a[1:] {
			for _, y := range b[1:] {
				if surnameEq(x, y) {
					shared++
					break
				}
			}
		}
		if 3*shared >= 2*(min(len(a), len(b))-1) {
			return true
		}
	}
	for i := 1; i < min(3, len(b)); i++ {
		if surnameEq(a[0], b[i]) {
			return true
		}
	}
	for i := 1; i < min(3, len(a)); i++ {
		if surnameEq(b[0], a[i]) {
			return true
		}
	}
	return false
}

// surnameEq tolerates one typo or lost diacritic ("Grundstrom"/"Grundstrm")
// and particles written apart ("de breucker"/"debreucker").
func surnameEq(x, y name) bool {
	if x.compact == y.compact {
		return true
	}
	if len(x.compact) >= 5 && len(y.compact) >= 5 && levenshtein(x.compact, y.compact, 1) <= 1 {
		return true
	}
	// "van graaf" vs "van der graaf": compare the last word.
	return len(x.last) >= 4 && x.last == y.last
}

func lastWord(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

// similarity is 1 - levenshtein/maxLen; it returns 0 early when the
// similarity cannot reach floor.
func similarity(a, b string, floor float64) float64 {
	if a == b {
		return 1
	}
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	maxDist := int(float64(n) * (1 - floor))
	if floor <= 0 {
		maxDist = n
	}
	d := levenshtein(a, b, maxDist)
	if d > maxDist {
		return 0
	}
	return 1 - float64(d)/float64(n)
}

// levenshtein returns the byte edit distance of a and b, or limit+1 as
// soon as the distance is known to exceed limit (banded, O(n·limit)).
func levenshtein(a, b string, limit int) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > limit {
		return limit + 1
	}
	limit = min(limit, len(b)) // keeps big within int32 for any input
	big := int32(limit + 1)
	// Two rows on the stack for ordinary titles: no allocation per pair.
	var stack [2][256]int32
	var prev, cur []int32
	if n := len(a) + 2; n <= len(stack[0]) {
		prev, cur = stack[0][:n], stack[1][:n]
	} else {
		prev, cur = make([]int32, n), make([]int32, n)
	}
	for i := range prev {
		prev[i] = min(int32(i), big)
	}
	for j := 1; j <= len(b); j++ {
		lo, hi := max(1, j-limit), min(len(a), j+limit)
		cur[0] = min(int32(j), big)
		rowMin := cur[0]
		if lo > 1 {
			cur[lo-1] = big
			rowMin = big
		}
		for i := lo; i <= hi; i++ {
			v := prev[i-1]
			if a[i-1] != b[j-1] {
				v++
			}
			v = min(v, prev[i]+1, cur[i-1]+1, big)
			cur[i] = v
			rowMin = min(rowMin, v)
		}
		cur[hi+1] = big
		if rowMin > big-1 {
			return int(big)
		}
		prev, cur = cur, prev
	}
	return int(min(prev[len(a)], big))
}

// Explain compares two records the way Analyze does and says what it
// decided and why ("duplicate: title 0.962, year gap 0", "distinct:
// different volumes"), so a reviewer can question a single decision.
func Explain(a, b research.RawPaper) string {
	fa, fb := extract(a), extract(b)
	d := compare(&fa, &fb)
	v := [...]string{distinct: "distinct", related: "related", duplicate: "duplicate"}[d.verdict]
	if d.detail == "" {
		return v
	}
	return v + ": " + d.detail
}
