package organize

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/research"
	"quarry/internal/skills/text"
)

// otherLabel names a group none of whose terms can stand for it.
const otherLabel = "Other papers"

// A researcher skims a label, so it is a few terms, and a term is a word
// or a short phrase as the papers write it.
const (
	maxLabelTerms   = 3
	maxLabelWords   = 5 // as shown; "short-term" is one word
	fullLabelWords  = 4 // no term is added to a label this long
	maxPhraseWords  = 3 // content words of one term: "long short-term memory"
	maxPhraseTokens = 5 // words of one term with "of" and numbers: "risk of bias"
)

// Weights of the labeller, set by reading the labels TestDemoLabels prints.
const (
	// titleWeight is what a term in a paper's title counts, against 1
	// in its abstract: a title says what the paper is about, an abstract
	// also says how and against what. A term in both counts both.
	titleWeight = 1.5
	// smoothing keeps a term the group shares with a few outside papers
	// from scoring as if it were the group's alone.
	smoothing = 0.1
	// extendShare is how much of a term's weight in the group a longer
	// phrase holding it must keep to be shown instead: "language models"
	// becomes "large language models" when most of its papers say so.
	extendShare = 0.7
	// modifierShare is how often a word must be followed by another
	// content word to be taken for a modifier ("deep" in "deep
	// learning"), which names nothing alone.
	modifierShare = 0.75
	// verbalShare is how often a word must be followed by a determiner
	// to be taken for a verb ("ranks the documents").
	verbalShare = 0.25
)

// genericWords are words of academic prose that say how a paper argues,
// not what it is about ("we propose a novel approach", "results show").
// text's stop words, which the tokenizer already drops, are function
// words; these are content words found in abstracts of every field, so no
// label shows them and no term spans them. They are listed as written,
// not stemmed, because a stem would also catch topic words ("based" and
// "base editing" share the stem "base").
var genericWords = setOf(
	"able", "achieve", "achieved", "achieves", "across", "adapt", "adapting", "adapts", "additional", "address",
	"addressed", "addresses", "allow", "allowed", "allowing", "allows", "already", "alternative", "another",
	"applied", "applies", "apply", "applying", "approach", "approaches", "argue", "argued", "argues", "around",
	"article", "assess", "assessed", "assesses", "assessing", "associated", "available", "based", "became",
	"become", "becomes", "better", "beyond", "build", "building", "builds", "built", "called", "certain",
	"chosen", "clear", "clearly", "combine", "combined", "combines", "combining", "commonly", "compare",
	"compared", "compares", "comparing", "conducted", "conducting", "consider", "considered", "considers",
	"contrast", "contribute", "contributed", "contributes", "contributing", "currently", "decade", "decades",
	"demonstrate", "demonstrated", "demonstrates", "describe", "described", "describes", "describing",
	"despite", "detailed", "detect", "detected", "detecting", "detects", "develop", "developed", "developing",
	"develops", "different", "directly", "discuss", "discussed", "discusses", "discussing", "easily",
	"effectively", "enable", "enabled", "enhance", "enhanced", "enhances", "enhancing", "enables", "enabling", "end", "ensure", "especially", "establish",
	"established", "establishes", "estimating", "evaluate", "evaluated", "evaluates", "evaluating", "even",
	"every", "examine", "examined", "examines", "example", "examples", "existing", "explain", "explained",
	"explains", "explore", "explored", "explores", "exploring", "fact", "far", "fewer", "find", "finding",
	"finds", "first", "five", "focus", "focuses", "following", "found", "four", "fully", "generally", "give",
	"given", "gives", "giving", "good", "great", "greater", "help", "helps", "highly", "idea", "ideas",
	"identified", "identifies", "identify", "identifying", "implement", "implemented", "implementing",
	"implements", "important", "improve", "improved", "improves", "improving", "include", "included",
	"includes", "including", "increase", "increased", "increases", "increasing", "instead", "introduce",
	"introduced", "introduces", "introducing", "investigate", "investigated", "investigates", "issue", "issues",
	"keep", "keeps", "kept", "key", "known", "last", "later", "lead", "leading", "leads", "led", "less", "let",
	"lets", "like", "likely", "little", "made", "main", "mainly", "make", "makes", "making", "many",
	"measuring", "method", "methods", "much", "need", "needed", "needs", "new", "next", "nine", "non", "novel",
	"observed", "obtain", "obtained", "often", "one", "ones", "outperform", "outperformed", "outperforms",
	"overall", "paper", "papers", "particular", "particularly", "perform", "performed", "performing",
	"performs", "place", "possible", "potential", "potentially", "practical", "predicting", "present",
	"presented", "presents", "previous", "previously", "principal", "prior", "produce", "produced", "produces",
	"producing", "propose", "proposed", "proposes", "prove", "proved", "proven", "proves", "provide",
	"provided", "provides", "providing", "put", "quantified", "quantifies", "quantify", "quantifying", "rather",
	"recent", "recently", "reduce", "reduced", "reduces", "reducing", "regarding", "relatively", "remain",
	"remains", "report", "reported", "reports", "represent", "represented", "representing", "represents",
	"require", "required", "requires", "respectively", "result", "resulted", "results", "reveal", "revealed",
	"reveals", "rising", "same", "second", "see", "seen", "separate", "separates", "seven", "several", "show",
	"showed", "showing", "shown", "shows", "significant", "significantly", "similar", "similarly", "simple",
	"simpler", "simply", "since", "six", "start", "started", "starting", "starts", "state-of-the-art", "still",
	"strong", "strongly", "studied", "studies", "study", "studying", "substantial", "substantially", "suggest",
	"suggested", "suggests", "take", "taken", "takes", "ten", "three", "together", "took", "toward", "towards",
	"turn", "two", "typical", "typically", "understand", "understands", "unlike", "us", "use", "used", "useful",
	"uses", "using", "usually", "varied", "varies", "various", "vary", "way", "ways", "well", "well-known",
	"whole", "widely", "work", "worked", "works", "write", "writes",
)

// weakWords name no theme alone but do inside a phrase: "long" in "long
// short-term memory", "change" in "climate change", "control" in
// "concurrency control", "type" in "type 2 diabetes". A term must hold a
// word that is not weak.
var weakWords = setOf(
	"analysis", "average", "case", "cases", "change", "changes", "control", "current", "data", "early",
	"effect", "effects", "evidence", "form", "forms", "full", "general", "global", "high", "higher", "human",
	"large", "larger", "level", "levels", "long", "low", "lower", "mean", "means", "measure", "measures",
	"model", "models", "number", "order", "original", "outcome", "outcomes", "part", "participants", "patients",
	"performance", "point", "problem", "problems", "range", "real", "related", "research", "review", "reviews",
	"right", "role", "run", "set", "sets", "short", "side", "single", "small", "smaller", "standard", "state",
	"studies", "study", "system", "systems", "term", "terms", "total", "treatment", "trial", "trials", "true",
	"type", "types", "understanding", "view", "wide", "year", "years",
)

// phraseWords are stop words a term may hold inside it: "risk of bias".
var phraseWords = setOf("of")

// determiners follow a verb, rarely a noun: "ranks the documents".
var determiners = setOf("a", "an", "each", "every", "it", "its", "the", "their", "them", "these", "this", "those")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isGeneric reports whether the lower-case word w is academic filler
// that no label shows.
func isGeneric(w string) bool { return genericWords[w] }

// isWeak reports whether the lower-case word or compound w names no
// theme on its own ("long", "long-term"), though it may in a phrase.
func isWeak(w string) bool {
	return !slices.ContainsFunc(strings.Split(w, "-"), func(p string) bool { return isContentWord(p) && !weakWords[p] })
}

// isContentWord reports whether a term can be about w: two or more
// characters, not all digits, not a stop word or filler.
func isContentWord(w string) bool {
	return utf8.RuneCountInString(w) >= 2 && !isDigits(w) && !text.IsStopword(w) && !isGeneric(w)
}

// unitKind is the part a word (or hyphenated compound) may play in a term.
type unitKind int8

const (
	breaker unitKind = iota // ends a term: stop word, filler, single letter
	content                 // may start, end or fill a term
	number                  // inside a term only: "type 2 diabetes"
	joiner                  // "of", inside a term only
)

// unit is a word, or a hyphenated compound ("short-term", "COVID-19")
// that a label shows whole.
type unit struct {
	kind  unitKind
	weak  bool   // names no theme alone: "long", "long-term"
	key   string // the parts' stems joined by spaces: what is compared
	stems []string
	// lower is the unit as written, lower-cased; written keeps the case.
	lower, written string
	// informative says the written case means something: the unit is
	// not at a sentence's start or in a title, where any word may be
	// capitalised, or it has a capital inside ("BERT", "AlphaFold").
	informative bool
}

// phrase is one occurrence of a candidate term in a text.
type phrase struct {
	key, lower string
	stems      []string
	words      int // content units
	// modifies says a single word is followed by another content word,
	// as "deep" in "deep learning".
	modifies bool
	// verbal says a single word is followed by a determiner, as a verb
	// is by its object ("ranks the documents").
	verbal bool
}

// termStats is what the labeller knows of one candidate term.
type termStats struct {
	stems     []string
	words     int     // content units, for preferring a phrase
	papers    []int32 // papers holding it, ascending
	titles    []int32 // papers whose title holds it, ascending
	abstracts []int32 // papers whose abstract holds it, ascending
	// seen counts the term's occurrences, modifier and verbal those
	// marked so in phrase.
	seen, modifier, verbal int
	// lowerForms counts the spellings, for choosing between "language
	// model" and "language models".
	lowerForms map[string]int
	shown      string // the display form, once computed
}

// labeler holds the candidate terms of a collection, so that each
// group's label weighs its terms against the papers outside it.
type labeler struct {
	n     int
	terms map[string]*termStats
	// cased counts, for each lower-cased unit, how it is written where
	// its case is informative.
	cased map[string]map[string]int
	stems map[string]string // a cache: stemming is most of the work
}

// newLabeler reads the candidate terms of every paper's title and abstract.
func newLabeler(papers []research.ScoredPaper) *labeler {
	l := &labeler{n: len(papers), terms: map[string]*termStats{}, cased: map[string]map[string]int{}, stems: map[string]string{}}
	for i, p := range papers {
		l.read(int32(i), p.Title, true)
		l.read(int32(i), p.Abstract, false)
	}
	return l
}

// read adds the terms of one text of paper i.
func (l *labeler) read(i int32, s string, title bool) {
	for _, units := range l.clauses(s, title) {
		for _, u := range units {
			if u.informative {
				if l.cased[u.lower] == nil {
					l.cased[u.lower] = map[string]int{}
				}
				l.cased[u.lower][u.written]++
			}
		}
		phrasesOf(units, func(ph phrase) {
			st := l.terms[ph.key]
			if st == nil {
				st = &termStats{stems: ph.stems, words: ph.words, lowerForms: map[string]int{}}
				l.terms[ph.key] = st
			}
			st.papers = appendOnce(st.papers, i)
			if title {
				st.titles = appendOnce(st.titles, i)
			} else {
				st.abstracts = appendOnce(st.abstracts, i)
			}
			st.seen++
			if ph.modifies {
				st.modifier++
			}
			if ph.verbal {
				st.verbal++
			}
			st.lowerForms[ph.lower]++
		})
	}
}

// appendOnce appends i to the ascending list s unless it ends with i
// already: a paper's texts are read one after the other.
func appendOnce(s []int32, i int32) []int32 {
	if n := len(s); n > 0 && s[n-1] == i {
		return s
	}
	return append(s, i)
}

// clauses splits s into runs of units that a term may span: words joined
// by spaces, hyphens and a possessive "'s". Any other punctuation ends a
// clause, so no term reaches across a comma or a sentence.
func (l *labeler) clauses(s string, title bool) [][]unit {
	// A title typed in capitals says nothing of how its words are written.
	caseTitle := title && strings.ToUpper(s) != s
	var out [][]unit
	var cur []unit
	var parts, written []string
	informative := false
	flushUnit := func() {
		if len(parts) > 0 {
			cur = append(cur, l.unit(parts, written, informative || caseTitle && hasInnerUpper(written)))
		}
		parts, written = nil, nil
	}
	flushClause := func() {
		flushUnit()
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	for i, r := range runs(s) {
		switch {
		case i > 0 && isHyphenSep(r.sep):
			// "short-term": the compound goes on.
		case i > 0 && isSpaceSep(r.sep):
			flushUnit()
		default:
			flushClause()
		}
		if len(parts) == 0 {
			informative = !title && i > 0 && !endsSentence(r.sep)
		}
		folded := text.Words(r.word) // "Alzheimer's" gives "alzheimer", "s"
		if len(folded) == 0 {
			continue
		}
		parts = append(parts, folded[0])
		written = append(written, r.word)
	}
	flushClause()
	return out
}

// unit classifies the words of one compound.
func (l *labeler) unit(parts, written []string, informative bool) unit {
	u := unit{written: strings.Join(written, "-"), informative: informative}
	u.lower = strings.ToLower(u.written)
	var keys []string
	for _, p := range parts {
		st, ok := l.stems[p]
		if !ok {
			st = text.Stem(p)
			l.stems[p] = st
		}
		keys = append(keys, st)
		if !slices.Contains(u.stems, st) { // "sequence-to-sequence" is one term
			u.stems = append(u.stems, st)
		}
	}
	u.key = strings.Join(keys, " ")
	joined := strings.Join(parts, "-")
	switch first := parts[0]; {
	case len(parts) == 1 && phraseWords[first]:
		u.kind = joiner
	case len(parts) == 1 && isDigits(first):
		u.kind = number
	case isGeneric(joined) || !slices.ContainsFunc(parts, isContentWord):
		u.kind = breaker
	default:
		u.kind = content
		u.weak = isWeak(joined)
	}
	return u
}

// run is one word as written and the separator before it.
type run struct{ sep, word string }

// runs splits s into words (letters and digits) and the text before
// each. A possessive "'s" stays on its word ("Alzheimer's").
func runs(s string) []run {
	var out []run
	start := 0
	for i := 0; i < len(s); {
		if !isWordRune(s, i) {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		j := i
		for j < len(s) && isWordRune(s, j) {
			_, n := utf8.DecodeRuneInString(s[j:])
			j += n
		}
		sep, w := s[start:i], s[i:j]
		if len(out) > 0 && isApostrophe(sep) && (w == "s" || w == "S") {
			out[len(out)-1].word += sep + w
		} else {
			out = append(out, run{sep: sep, word: w})
		}
		start, i = j, j
	}
	return out
}

// phrasesOf calls emit with every candidate term of a clause: runs of one
// to three content units, with numbers and "of" allowed inside, holding
// a unit that is not weak.
func phrasesOf(units []unit, emit func(phrase)) {
	for i, u := range units {
		if u.kind != content {
			continue
		}
		words, strong := 0, false
		for j := i; j < len(units) && j-i < maxPhraseTokens; j++ {
			v := units[j]
			if v.kind == breaker || v.kind == joiner && units[j-1].kind == joiner {
				break
			}
			if v.kind != content {
				continue
			}
			words++
			strong = strong || !v.weak
			if words > maxPhraseWords {
				break
			}
			if !strong || !canEnd(v) {
				continue
			}
			p := phrase{words: words}
			if j == i && j+1 < len(units) {
				p.modifies = units[j+1].kind == content
				p.verbal = determiners[units[j+1].lower]
			}
			var keys, lower []string
			for _, x := range units[i : j+1] {
				keys = append(keys, x.key)
				lower = append(lower, x.lower)
				if x.kind == content {
					p.stems = append(p.stems, x.stems...)
				}
			}
			if repeats(p.stems) { // "heart heart" is a typo, not a term
				continue
			}
			p.key, p.lower = strings.Join(keys, " "), strings.Join(lower, " ")
			emit(p)
		}
	}
}

// repeats reports whether a stem occurs twice in stems.
func repeats(stems []string) bool {
	for i, s := range stems {
		if slices.Contains(stems[:i], s) {
			return true
		}
	}
	return false
}

// canEnd reports whether a term may end with u. A past participle
// ("trained", "randomized") ends a clause's verb, not a name: "language
// model trained" is no theme.
func canEnd(u unit) bool {
	stem := u.stems[len(u.stems)-1]
	last := u.lower[strings.LastIndexByte(u.lower, '-')+1:]
	return !strings.HasSuffix(last, "ed") || len(last) <= 4 || stem == last
}

// candidate is a term scored for one group.
type candidate struct {
	key    string
	st     *termStats
	in     int     // the group's papers holding it
	weight float64 // 1 per abstract and titleWeight per title holding it
	score  float64
	// primary says the term is in two of the group's papers (or in its
	// only one); a term of the best paper's title alone comes after.
	primary bool
	// topTitle says the group's best paper has the term in its title.
	topTitle bool
}

// label names the group of members (indices into the papers, best
// first) by its most distinctive terms: terms that many of its papers
// write, in their titles above all, and few papers outside it do. A term
// must be in two of the group's papers or in its best paper's title, so
// a label never rests on one paper's passing word. taken holds the terms
// of labels already given, which are not repeated. It returns the label
// and the keys of its terms.
//
// A term's score is p·ln((p+s)/(q+s)), p and q its title-weighted shares
// of the papers in and out of the group: the term's part of the
// Kullback-Leibler divergence of the group from the rest, which rewards
// terms both common in the group and rare outside it, where TF-IDF
// weight alone also rewards a word common everywhere ("simple",
// "started").
func (l *labeler) label(members []int, taken map[string]bool) (string, []string) {
	inGroup := make(map[int32]bool, len(members))
	for _, m := range members {
		inGroup[int32(m)] = true
	}
	top := int32(members[0])
	nIn := float64(len(members))
	nOut := float64(l.n - len(members))
	var order []*candidate
	for key, st := range l.terms {
		in := count(st.papers, inGroup)
		if in == 0 {
			continue
		}
		topTitle := slices.Contains(st.titles, top)
		if in < 2 && !topTitle || !standsAlone(st) {
			continue
		}
		inTitle, inAbstract := count(st.titles, inGroup), count(st.abstracts, inGroup)
		w := float64(inAbstract) + titleWeight*float64(inTitle)
		pIn := w / nIn
		var pOut float64
		if nOut > 0 {
			pOut = (float64(len(st.abstracts)-inAbstract) + titleWeight*float64(len(st.titles)-inTitle)) / nOut
		}
		score := pIn * math.Log((pIn+smoothing)/(pOut+smoothing))
		if score <= 0 {
			continue
		}
		order = append(order, &candidate{key: key, st: st, in: in, weight: w, score: score, primary: in >= min(2, len(members)), topTitle: topTitle})
	}
	slices.SortFunc(order, func(a, b *candidate) int {
		if a.primary != b.primary {
			if a.primary {
				return -1
			}
			return 1
		}
		if s := cmp.Compare(b.score, a.score); s != 0 {
			return s
		}
		if s := cmp.Compare(b.st.words, a.st.words); s != 0 {
			return s
		}
		return cmp.Compare(a.key, b.key)
	})
	chosen := l.choose(order, taken)
	if len(chosen) == 0 {
		return otherLabel, nil
	}
	var shown, keys []string
	for _, c := range chosen {
		shown = append(shown, l.display(c.st))
		keys = append(keys, c.key)
	}
	return strings.Join(shown, ", "), keys
}

// count is the number of papers of list in the group.
func count(list []int32, group map[int32]bool) int {
	n := 0
	for _, p := range list {
		if group[p] {
			n++
		}
	}
	return n
}

// standsAlone reports whether a term can be one of a label's terms: a
// phrase can; a single word cannot when it mostly modifies the next word
// ("deep") or is often followed by a determiner, as verbs are.
func standsAlone(st *termStats) bool {
	if st.words > 1 {
		return true
	}
	n := float64(st.seen)
	return float64(st.modifier) < modifierShare*n && float64(st.verbal) < verbalShare*n
}

// choose picks a label's terms from the candidates, best first: no two
// sharing a word ("protein structure" and "structure"), none in taken,
// each the longest phrase holding it that most of its papers write
// (extend), and two terms that one phrase holds merged into it
// ("structure" and "protein" into "protein structure prediction").
func (l *labeler) choose(order []*candidate, taken map[string]bool) []*candidate {
	var chosen []*candidate
	words := func(cs []*candidate) int {
		n := 0
		for _, c := range cs {
			n += len(strings.Fields(l.display(c.st)))
		}
		return n
	}
	// clashes reports whether c is taken or shares a word with a chosen
	// term other than those at skip.
	clashes := func(c *candidate, skip ...int) bool {
		if taken[c.key] {
			return true
		}
		for i, d := range chosen {
			if !slices.Contains(skip, i) && slices.ContainsFunc(c.st.stems, func(s string) bool { return slices.Contains(d.st.stems, s) }) {
				return true
			}
		}
		return false
	}
	fill := func() {
		for _, c := range order {
			if len(chosen) == maxLabelTerms || words(chosen) >= fullLabelWords {
				return
			}
			if clashes(c) {
				continue
			}
			c = extend(c, order, clashes)
			if words(append(chosen[:len(chosen):len(chosen)], c)) <= maxLabelWords {
				chosen = append(chosen, c)
			}
		}
	}
	fill()
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(chosen) && !merged; i++ {
			for j := i + 1; j < len(chosen) && !merged; j++ {
				p := mergeOf(order, chosen[i], chosen[j], func(c *candidate) bool { return clashes(c, i, j) })
				if p == nil {
					continue
				}
				next := slices.Clone(chosen)
				next[i] = p
				next = slices.Delete(next, j, j+1)
				if words(next) <= maxLabelWords {
					chosen, merged = next, true
				}
			}
		}
		if merged {
			fill()
		}
	}
	return chosen
}

// mergeOf is the best term holding every word of a and b that two of
// the group's papers or its best paper's title write, or nil.
func mergeOf(order []*candidate, a, b *candidate, clashes func(*candidate) bool) *candidate {
	for _, p := range order {
		if (p.in >= 2 || p.topTitle) && holds(p, a) && holds(p, b) && !clashes(p) {
			return p
		}
	}
	return nil
}

// holds reports whether every word of c is in p.
func holds(p, c *candidate) bool {
	return !slices.ContainsFunc(c.st.stems, func(s string) bool { return !slices.Contains(p.st.stems, s) })
}

// extend returns the longest phrase holding c that keeps most of its
// weight in the group, so that a label says "large language models"
// rather than "language models" when most of the papers do.
func extend(c *candidate, order []*candidate, clashes func(*candidate, ...int) bool) *candidate {
	best := c
	inner := " " + c.key + " "
	for _, p := range order {
		if p.st.words <= best.st.words || p.weight < extendShare*c.weight || p.in < min(2, c.in) {
			continue
		}
		if strings.Contains(" "+p.key+" ", inner) && !clashes(p) {
			best = p
		}
	}
	return best
}

// display is the term as the papers most often write it: the commonest
// spelling ("language models" over "language model"), each word in the
// case the papers use where case tells ("BERT", "Bayesian", "AlphaFold"),
// lower-case when it was only seen at a sentence's start or in a title.
func (l *labeler) display(st *termStats) string {
	if st.shown == "" {
		units := strings.Split(mostCommon(st.lowerForms), " ")
		for i, u := range units {
			if forms := l.cased[u]; len(forms) > 0 {
				units[i] = mostCommon(forms)
			}
		}
		st.shown = strings.Join(units, " ")
	}
	return st.shown
}

// mostCommon is the key with the highest count; ties go to the shorter,
// then the alphabetically first, so the choice does not depend on map
// order.
func mostCommon(m map[string]int) string {
	best, bestN := "", -1
	for s, n := range m {
		if n > bestN || (n == bestN && (len(s) < len(best) || (len(s) == len(best) && s < best))) {
			best, bestN = s, n
		}
	}
	return best
}

// isWordRune reports whether the rune at s[i] belongs to a word, as text
// splits words: letters, digits and combining accents.
func isWordRune(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// isHyphenSep reports whether sep joins two words into one compound.
func isHyphenSep(sep string) bool {
	r, n := utf8.DecodeRuneInString(sep)
	return n == len(sep) && (r == '-' || r == '\u2010' || r == '\u2011')
}

func isApostrophe(sep string) bool { return sep == "'" || sep == "\u2019" }

func isSpaceSep(sep string) bool { return strings.TrimFunc(sep, unicode.IsSpace) == "" }

// endsSentence reports whether sep closes a sentence, after which a
// capital says nothing of how a word is written.
func endsSentence(sep string) bool { return strings.ContainsAny(sep, ".!?\n") }

func isDigits(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// hasInnerUpper reports whether a word has a capital after its first
// letter ("BERT", "AlphaFold", "mRNA"), which a title keeps too.
func hasInnerUpper(words []string) bool {
	for _, w := range words {
		for i, r := range w {
			if i > 0 && unicode.IsUpper(r) {
				return true
			}
		}
	}
	return false
}
