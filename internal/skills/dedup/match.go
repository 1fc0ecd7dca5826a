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

// Thresholds are the fuzzy matcher's tuned constants. They are
// deliberately strict: a missed duplicate costs a reviewer one extra line,
// a false merge loses a paper. DefaultThresholds are the values chosen by
// leave-one-set-out over the labelled sets (`quarry eval dedup --loso`,
// docs/dedup.md); the type is exported only so that harness can vary them.
type Thresholds struct {
	// TitleSim is the edit-distance similarity two titles need when
	// nothing but authors and year confirms them.
	TitleSim float64
	// TitleSimLocated is enough when volume and first page agree too.
	TitleSimLocated float64
	// ShortTitle: titles shorter than this (normalised bytes) must match
	// exactly; twice it is a "long" title.
	ShortTitle int
	// TruncatedMin is the shortest title trusted as a prefix of a longer
	// one cut by an export's length limit (with year, first author,
	// journal, volume and first page all agreeing).
	TruncatedMin int
}

// DefaultThresholds returns the thresholds Analyze uses.
func DefaultThresholds() Thresholds {
	return Thresholds{TitleSim: 0.93, TitleSimLocated: 0.85, ShortTitle: shortTitle, TruncatedMin: 40}
}

// Fixed constants: they only decide version links and identifier
// conflicts, which the labelled sets do not measure, so they were not
// tuned on them.
const (
	// minRelatedSim is the similarity for a preprint/publication pair.
	minRelatedSim = 0.90
	// differentTitleSim: below it, records sharing an identifier are
	// different works filed under one DOI (e.g. a book and its chapters).
	differentTitleSim = 0.60
	// shortTitle is the default Thresholds.ShortTitle, also used where
	// titles are cleaned.
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
func compare(a, b *features, th *Thresholds) decision {
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
		sim := similarity(a.title, b.title, differentTitleSim)
		switch {
		case sim < differentTitleSim && !subtitleMatch(&a.titleForm, &b.titleForm, th) && !truncated(&a.titleForm, &b.titleForm, th):
			return decision{related, id.reason, sim, fmt.Sprintf("same identifier, different titles (similarity %.2f)", sim)}
		case a.kind != b.kind:
			return decision{related, id.reason, sim, "same identifier, one is a " + nonEmpty(a.kind, b.kind)}
		case versionPair(a, b):
			return decision{related, id.reason, sim, "preprint and published version"}
		}
		return decision{duplicate, id.reason, 1, string(id.reason)}
	}
	return fuzzy(a, b, th)
}

// fuzzy compares records without a shared identifier, by their titles and
// by their translated titles when either gives one.
func fuzzy(a, b *features, th *Thresholds) decision {
	d := fuzzyForms(a, b, &a.titleForm, &b.titleForm, th)
	if d.verdict != distinct || a.alt == nil && b.alt == nil {
		return d
	}
	for _, p := range [...][2]*titleForm{{a.alt, &b.titleForm}, {&a.titleForm, b.alt}, {a.alt, b.alt}} {
		if p[0] == nil || p[1] == nil || p[0].title == "" || p[1].title == "" {
			continue
		}
		if e := fuzzyForms(a, b, p[0], p[1], th); e.verdict != distinct {
			e.detail += ", translated title"
			return e
		}
	}
	return d
}

func fuzzyForms(a, b *features, ta, tb *titleForm, th *Thresholds) decision {
	// Conflicting identifiers: two different DOIs (or PMIDs, arXiv IDs) are
	// two records, however alike their titles — unless one DOI is the
	// preprint server's, which the version check below handles.
	if conflict(a.doi, b.doi) && !versionPair(a, b) || conflict(a.pmid, b.pmid) || conflict(a.arxiv, b.arxiv) {
		return reject("different identifiers")
	}
	if a.kind != b.kind {
		return reject("different kinds (erratum, reply, comment…)")
	}
	yearGap := 0
	if a.year != 0 && b.year != 0 {
		yearGap = abs(a.year - b.year)
	}
	if yearGap > 2 {
		return reject("years too far apart")
	}
	// Where both records are located in a journal, the location must agree:
	// a conference abstract and the article share title and authors but not
	// volume and pages, and a column recurs under one title in every issue.
	if conflict(a.volume, b.volume) {
		return reject("different volumes")
	}
	if a.issueLo != 0 && b.issueLo != 0 && (a.issueHi < b.issueLo || b.issueHi < a.issueLo) {
		return reject("different issues")
	}
	venueOK := venuesCompatible(a.venue, b.venue)
	located := a.volume != "" && a.volume == b.volume && a.page != "" && a.page == b.page
	// sameplace: year, journal, volume and first page agree, which two
	// different articles never share; a letter and its reply or two letters
	// under one heading may, so authors are still compared.
	sameplace := located && yearGap == 0 && a.venue != "" && b.venue != "" && venueOK
	trunc := sameplace && truncated(ta, tb, th) && len(a.surnames) > 0 && len(b.surnames) > 0 && surnameEq(a.surnames[0], b.surnames[0])
	if n := max(len(ta.title), len(tb.title)); float64(abs(len(ta.title)-len(tb.title))) > (1-th.TitleSimLocated)*float64(n) &&
		!subtitleMatch(ta, tb, th) && !trunc {
		return reject("titles differ")
	}
	if !authorsAgree(a.surnames, b.surnames) &&
		!(sameplace && ta.title == tb.title && len(ta.title) >= 2*th.ShortTitle && (a.group || b.group || namesOverlap(a, b))) {
		// A group author ("ALTS Group") or names written surname-last in
		// one database only pass where everything else is identical.
		return reject("different authors")
	}

	sim := similarity(ta.title, tb.title, th.TitleSimLocated)
	sub := false
	switch {
	case trunc:
		sim = th.TitleSimLocated
	case sim < th.TitleSimLocated && subtitleMatch(ta, tb, th):
		sub, sim = true, th.TitleSimLocated
	}
	switch {
	case ta.digits == tb.digits:
	case (sub || trunc) && digitsSubset(ta, tb):
	case sameplace && sim >= th.TitleSim && oneDigitDropped(ta.digits, tb.digits):
		// "p6INK4a" for "p16INK4a" at the same place: a dropped character.
	default:
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
	if conflict(a.page, b.page) && !(a.volume != "" && a.volume == b.volume && yearGap == 0 && venueOK &&
		min(len(ta.title), len(tb.title)) >= 2*th.ShortTitle && sim >= th.TitleSim && !ta.generic && pagesNoisy(a, b)) {
		// Pages are the noisiest field: e-locators beside print pages
		// ("e12724", "1-6"), a range and its last page ("569", "567-569").
		// Only such disagreements are forgiven, for a long, matching title
		// in the same volume and year; distant pages are two items.
		return reject("different pages")
	}
	if a.venueTyp != 0 && b.venueTyp != 0 && a.venueTyp != b.venueTyp {
		return reject("conference and journal versions")
	}
	if !venueOK && !located {
		// The same title and authors in two journals is a duplicate
		// publication or an abstract and its article: two records. Only
		// the same volume and first page outweigh two names for a venue.
		return reject("different venues")
	}
	if yearGap == 1 && !venueOK {
		return reject("different year and venue")
	}

	need := th.TitleSim
	if located {
		need = th.TitleSimLocated
	}
	short := min(len(ta.title), len(tb.title)) < th.ShortTitle
	switch {
	case short && ta.title != tb.title:
		return reject("short titles differ")
	case short && !located && (ta.generic || yearGap != 0 || !venueOK || len(a.surnames) == 0 || len(b.surnames) == 0):
		// "Editorial", "Introduction": only where they stand identifies
		// them; other short titles need the same year, authors and venue.
		return reject("short title without volume and page, year, authors or venue to confirm it")
	case trunc:
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
		if ta.title != tb.title || yearGap != 0 || !venueOK {
			return reject("no authors and titles not identical")
		}
	}
	detail := fmt.Sprintf("title %.3f, year gap %d", sim, yearGap)
	switch {
	case trunc:
		detail = "title cut short, " + detail[strings.Index(detail, "year"):]
	case sub:
		detail = "title without subtitle, " + detail[strings.Index(detail, "year"):]
	}
	if located {
		detail += ", same volume and page"
	}
	return decision{duplicate, Fuzzy, sim, detail}
}

// truncated reports whether one title is the start of the other, cut at
// a length limit (possibly mid-word) or missing a trailing phrase, and
// long enough to say which paper it is.
func truncated(ta, tb *titleForm, th *Thresholds) bool {
	short, long := ta.title, tb.title
	if len(short) > len(long) {
		short, long = long, short
	}
	return len(short) >= th.TruncatedMin && len(short) < len(long) && strings.HasPrefix(long, short)
}

// pagesNoisy reports whether two records' different pages may still be
// one article's: either is an e-locator or article number ("e12724",
// "a1754"), or the numeric ranges overlap ("569" within "567-569").
func pagesNoisy(a, b *features) bool {
	if a.pageLo == 0 || b.pageLo == 0 {
		// A supplement page ("S42") beside print pages is a meeting
		// abstract's and the article's, not an e-locator.
		return !(a.pageLo > 0 && b.page[0] == 's' || b.pageLo > 0 && a.page[0] == 's')
	}
	return a.pageLo <= b.pageHi && b.pageLo <= a.pageHi
}

// oneDigitDropped reports whether one digit string is the other with one
// digit left out ("6" and "16").
func oneDigitDropped(x, y string) bool {
	if len(x) > len(y) {
		x, y = y, x
	}
	if len(y) != len(x)+1 {
		return false
	}
	for i := range len(y) {
		if y[:i]+y[i+1:] == x {
			return true
		}
	}
	return false
}

// namesOverlap reports whether at least half of one list's surnames occur
// among the words of the other's names: the same people, with given and
// family names swapped by one database. Only called for records at one
// place whose first authors differ, so it may allocate.
func namesOverlap(a, b *features) bool {
	check := func(x, y *features) bool {
		if len(x.surnames) == 0 {
			return false
		}
		words := map[string]bool{}
		for _, n := range y.authors {
			for _, w := range strings.Fields(research.NormalizeTitle(n)) {
				words[w] = len(w) > 1
			}
		}
		found := 0
		for _, s := range x.surnames {
			if words[s.last] || words[s.compact] {
				found++
			}
		}
		return 2*found >= len(x.surnames)
	}
	return check(a, b) || check(b, a)
}

func reject(why string) decision { return decision{verdict: distinct, reason: Fuzzy, detail: why} }

// versionPair reports whether one record is a preprint and the other a
// publication, which a reviewer needs to see as two linked records.
func versionPair(a, b *features) bool {
	return a.preprint && b.published || a.published && b.preprint
}

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

// subtitleMatch reports whether one title is the other minus its subtitle
// ("Unilateral neglect in stroke" / "…: a comparative study").
func subtitleMatch(a, b *titleForm, th *Thresholds) bool {
	if a.title == b.title {
		return true
	}
	short, long := a, b
	if len(short.title) > len(long.title) {
		short, long = long, short
	}
	if len(short.title) < th.ShortTitle || strings.Count(short.title, " ") < 2 {
		return false
	}
	for _, p := range long.prefixes {
		if p == short.title {
			return true
		}
	}
	return false
}

func digitsSubset(a, b *titleForm) bool {
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
	th := DefaultThresholds()
	d := compare(&fa, &fb, &th)
	v := [...]string{distinct: "distinct", related: "related", duplicate: "duplicate"}[d.verdict]
	if d.detail == "" {
		return v
	}
	return v + ": " + d.detail
}
