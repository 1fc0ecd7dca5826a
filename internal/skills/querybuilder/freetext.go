package querybuilder

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/skills/text"
)

// polarity is what a cue says of the terms in its scope.
type polarity int

const (
	none polarity = iota
	wanted
	unwanted
)

// cue is a run of words that opens a scope: the terms after it, up to the
// end of the clause, are wanted or unwanted.
type cue struct {
	words []string
	pol   polarity
}

// cues, longest first so "not only" wins over "not" and "not interested
// in" over "interested in". No cue names a topic: they are the ways
// people say "more of this" and "less of that" in any field.
var cues = func() []cue {
	want := []string{
		"not only", "not just", "not limited to", "not exclusively", "not solely", "not restricted to",
		"more on", "more about", "more of", "more", "focus on", "focus more on", "concentrate on", "emphasis on",
		"emphasise", "emphasize", "also", "include", "including", "add", "especially", "particularly",
		"in particular", "interested in", "looking for", "look for", "want", "need", "prefer", "prioritise",
		"prioritize", "what about", "how about", "consider", "expand to", "broaden to", "extend to", "cover",
		"such as", "like", "for example", "e.g", "only", "keep", "search for", "but also",
	}
	unwant := []string{
		"less on", "less about", "less of", "less", "fewer", "exclude", "excluding", "exclude all", "no", "not",
		"without", "drop", "remove", "avoid", "ignore", "skip", "filter out", "leave out", "get rid of",
		"too much", "too many", "nothing on", "nothing about", "no more", "not interested in", "don't want",
		"do not want", "dont want", "not about", "stop", "rather than", "instead of", "away from",
		"not on", "not in", "not into", "don't need", "do not need", "not looking for", "not want",
		"stop showing me", "stop showing", "don't show me", "do not show me", "no more of",
	}
	var out []cue
	for _, w := range want {
		out = append(out, cue{strings.Fields(w), wanted})
	}
	for _, w := range unwant {
		out = append(out, cue{strings.Fields(w), unwanted})
	}
	slices.SortStableFunc(out, func(a, b cue) int { return len(b.words) - len(a.words) })
	return out
}()

// judgements are words after "not"/"no" that judge rather than name a
// topic ("not relevant", "no good"): that "not" opens no scope.
var judgements = map[string]bool{"relevant": true, "useful": true, "helpful": true, "good": true, "enough": true,
	"what": true, "sure": true, "really": true, "very": true, "quite": true, "related": true, "interesting": true,
	"bad": true, "much": true, "many": true, "so": true, "too": true, "all": true, "exactly": true, "necessarily": true,
	"convinced": true, "clear": true, "great": true, "a": true, "the": true, "that": true, "this": true,
	"it": true, "them": true, "these": true, "those": true, "yet": true, "one": true, "ones": true,
	"everything": true, "always": true, "entirely": true, "fully": true, "worth": true}

// postfix judgements: "<X> is irrelevant", "<X> are exactly right".
var (
	copulas  = map[string]bool{"is": true, "are": true, "was": true, "were": true, "seems": true, "seem": true, "looks": true, "look": true}
	badJudge = [][]string{{"irrelevant"}, {"off-topic"}, {"off", "topic"}, {"not", "relevant"}, {"not", "useful"},
		{"not", "helpful"}, {"out", "of", "scope"}, {"noise"}, {"useless"}, {"unrelated"}, {"not", "what"}, {"wrong"}}
	goodJudge = [][]string{{"relevant"}, {"useful"}, {"helpful"}, {"great"}, {"spot", "on"}, {"exactly"}, {"what", "i"},
		{"very", "relevant"}, {"on", "topic"}, {"central"}, {"key"}, {"important"}}
)

// filler words that frame a term rather than are part of it: trimmed
// from both ends of an item ("papers on X", "X studies please").
var filler = map[string]bool{
	"papers": true, "paper": true, "studies": true, "study": true, "articles": true, "article": true, "work": true,
	"works": true, "research": true, "stuff": true, "things": true, "thing": true, "ones": true, "results": true,
	"please": true, "anymore": true, "instead": true, "here": true, "there": true, "literature": true,
	"publications": true, "topics": true, "topic": true, "anything": true, "everything": true, "something": true,
	"items": true, "hits": true, "etc": true, "well": true, "again": true, "too": true, "also": true, "more": true,
	"less": true, "fewer": true, "lot": true, "lots": true, "bit": true, "little": true, "much": true, "many": true,
	"some": true, "any": true, "all": true, "other": true, "others": true, "related": true, "focused": true,
	"focusing": true, "based": true, "eg": true, "kind": true, "kinds": true,
	"sort": true, "sorts": true, "type": true, "types": true, "like": true, "only": true, "just": true,
	"good": true, "great": true, "nice": true, "fine": true, "ok": true, "okay": true, "thanks": true, "thank": true,
	"overall": true, "mostly": true, "mainly": true, "now": true, "currently": true, "already": true, "even": true,
	"especially": true, "particularly": true, "specifically": true, "really": true, "actually": true,
	"seem": true, "seems": true, "looks": true, "look": true, "want": true, "need": true, "i": true, "we": true,
}

// token is a word of feedback, a "quoted phrase" kept whole, or a
// punctuation mark that ends a clause (".") or an item (",").
type token struct {
	text   string
	lower  string
	quoted bool
	punct  byte // '.', ',' or 0 for a word
}

// lex splits feedback into tokens.
func lex(s string) []token {
	var out []token
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == '"' || r == '“' || r == '”':
			rest := s[size:]
			end := strings.IndexAny(rest, "\"”“")
			if end < 0 {
				end = len(rest)
			}
			if p := strings.Join(strings.Fields(rest[:end]), " "); p != "" {
				out = append(out, token{text: p, lower: strings.ToLower(p), quoted: true})
			}
			s = rest[min(len(rest), end):]
			if len(s) > 0 {
				_, n := utf8.DecodeRuneInString(s)
				s = s[n:]
			}
		case strings.ContainsRune(".!?;:\n()", r):
			out = append(out, token{punct: '.'})
			s = s[size:]
		case r == ',':
			out = append(out, token{punct: ','})
			s = s[size:]
		case unicode.IsSpace(r):
			s = s[size:]
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return unicode.IsSpace(r) || strings.ContainsRune(`",;!?:()“”`, r)
			})
			if end < 0 {
				end = len(s)
			}
			w := s[:end]
			s = s[end:]
			// a full stop ends a clause unless it is inside the word (e.g. "e.g")
			for strings.HasSuffix(w, ".") {
				w = strings.TrimSuffix(w, ".")
				if w != "" && !strings.Contains(w, ".") {
					s = "." + s
					break
				}
			}
			w = strings.Trim(w, "'’")
			if w != "" {
				out = append(out, token{text: w, lower: strings.ToLower(w)})
			}
		}
	}
	return out
}

// named reports whether a word names a thing whatever its place: an
// acronym (BERT, fMRI), a camel-case name (ImageNet, PubMed) or a word
// mixing letters and digits (COVID-19, GPT-4).
func named(w string) bool {
	upper, lower, digit, letters := 0, 0, 0, 0
	for i, r := range w {
		switch {
		case unicode.IsUpper(r):
			upper++
			letters++
			if i > 0 && lower > 0 {
				return true // camel case after a lower-case letter: ImageNet, fMRI
			}
		case unicode.IsLower(r):
			lower++
			letters++
		case unicode.IsDigit(r):
			digit++
		}
	}
	return upper >= 2 && lower <= upper || letters > 0 && digit > 0 && upper > 0
}

// sentenceCase reports whether toks[0], a clause's first word, is
// capitalised only because it comes first: it is not a named word and the
// next word is not capitalised too ("Prospect Theory is ...").
func sentenceCase(toks []token) bool {
	t := toks[0]
	if t.quoted || t.punct != 0 || !capitalised(t.text) || named(t.text) {
		return false
	}
	return len(toks) < 2 || toks[1].punct != 0 || toks[1].quoted || !capitalised(toks[1].text)
}

// capitalised reports whether w starts with an upper-case letter.
func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// ReadFeedback reads the researcher's free text for the terms they want
// more of and the terms they want less of, with the scope of each cue:
// "not only X" and "more on X" want X, "less on X", "exclude X", "no X"
// and "without X" do not; a cue reaches to the end of its clause, over a
// list ("X, Y and Z"); "but" after an unwanted scope turns to wanted ("not
// X but Y"); "X is irrelevant" and "X are great" judge X. A quoted phrase
// is one term. A named thing (ImageNet, BERT, COVID-19, or capitalised
// words inside a sentence such as "Viewstamped Replication") is a term
// wherever it is, wanted unless it stands in an unwanted scope. A term
// both wanted and unwanted is wanted: excluding it is the riskier reading.
func ReadFeedback(s string) (want, unwant []string) {
	toks := lex(s)
	add := func(pol polarity, term string) {
		if term == "" || utf8.RuneCountInString(term) > 100 {
			return
		}
		switch pol {
		case wanted:
			want = append(want, term)
		case unwanted:
			unwant = append(unwant, term)
		}
	}
	for start := 0; start < len(toks); {
		end := start
		for end < len(toks) && toks[end].punct != '.' {
			end++
		}
		readClause(toks[start:end], add)
		start = end + 1
	}
	want = text.UniqueFold(want)
	var out []string
	for _, u := range text.UniqueFold(unwant) {
		if !text.ContainsFold(want, u) {
			out = append(out, u)
		}
	}
	return want, out
}

// matchCue returns the cue at toks[i], if any.
func matchCue(toks []token, i int) (cue, bool) {
	for _, c := range cues {
		if i+len(c.words) > len(toks) {
			continue
		}
		ok := true
		for j, w := range c.words {
			t := toks[i+j]
			if t.punct != 0 || t.quoted || t.lower != w {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		next := i + len(c.words)
		if c.pol == unwanted && (c.words[len(c.words)-1] == "not" || c.words[len(c.words)-1] == "no") {
			if next >= len(toks) || toks[next].punct != 0 || !toks[next].quoted && judgements[toks[next].lower] {
				continue // "not relevant", "No, ..."
			}
		}
		if c.words[0] == "like" && i > 0 && (toks[i-1].lower == "would" || toks[i-1].lower == "i'd" || toks[i-1].lower == "i") {
			continue // "I'd like more on X": the next cue decides
		}
		return c, true
	}
	return cue{}, false
}

// readClause reads one clause (a sentence or a part ended by ; : etc.).
func readClause(toks []token, add func(polarity, string)) {
	if judged(toks, add) {
		return
	}
	pol, inScope := none, false
	var item []token
	flush := func() {
		if inScope {
			add(pol, itemTerm(item))
		} else {
			for _, n := range namedIn(item) {
				add(wanted, n)
			}
		}
		item = item[:0]
	}
	first := true
	for i := 0; i < len(toks); {
		t := toks[i]
		if t.punct == ',' {
			flush()
			// A list goes on after a comma ("X, Y and Z"); anything
			// longer or with a verb of judgement ends the scope.
			if inScope && !listGoesOn(toks[i+1:]) {
				inScope, pol = false, none
			}
			i++
			continue
		}
		if t.punct == 0 && !t.quoted && (t.lower == "and" || t.lower == "or" || t.lower == "&" || t.lower == "/" || t.lower == "nor") {
			flush()
			i++
			continue
		}
		if t.punct == 0 && !t.quoted && (t.lower == "but" || t.lower == "however" || t.lower == "though" || t.lower == "although") {
			flush()
			if c, ok := matchCue(toks, i+1); ok {
				pol, inScope = c.pol, true
				i += 1 + len(c.words)
				continue
			}
			if inScope && pol == unwanted {
				pol = wanted // "not X but Y"
			} else {
				inScope, pol = false, none
			}
			i++
			continue
		}
		if c, ok := matchCue(toks, i); ok {
			flush()
			pol, inScope = c.pol, true
			i += len(c.words)
			first = false
			continue
		}
		if !t.quoted && first && sentenceCase(toks[i:]) {
			t.text = strings.ToLower(t.text) // a sentence's first word is capitalised anyway
		}
		first = false
		item = append(item, t)
		i++
	}
	flush()
}

// listGoesOn reports whether the tokens after a comma continue a list of
// terms: a short item (at most three words) before the next comma or
// the end, with no cue, copula or "and then" of a new sentence part.
func listGoesOn(toks []token) bool {
	n := 0
	for i, t := range toks {
		if t.punct != 0 {
			break
		}
		if _, ok := matchCue(toks, i); ok && t.lower != "and" {
			return false
		}
		if copulas[t.lower] || t.lower == "i" || t.lower == "we" || t.lower == "it" || t.lower == "this" || t.lower == "they" {
			return false
		}
		if t.lower == "and" || t.lower == "or" {
			continue
		}
		n++
	}
	return n > 0 && n <= 3
}

// judged reads "<X> is irrelevant" and "<X> are great": a subject, a
// copula, a judgement. It reports whether the clause was one.
func judged(toks []token, add func(polarity, string)) bool {
	for k, t := range toks {
		if t.punct != 0 || t.quoted || !copulas[t.lower] || k == 0 {
			continue
		}
		rest := words(toks[k+1:])
		pol := none
		for _, j := range badJudge {
			if hasPrefix(rest, j) || len(rest) > 0 && rest[0] == "all" && hasPrefix(rest[1:], j) {
				pol = unwanted
			}
		}
		if pol == none {
			for _, j := range goodJudge {
				if hasPrefix(rest, j) {
					pol = wanted
				}
			}
		}
		if pol == none {
			return false
		}
		subj := toks[:k]
		for i := len(subj) - 1; i >= 0; i-- { // the subject after the last cue or comma
			if subj[i].punct != 0 {
				subj = subj[i+1:]
				break
			}
		}
		if len(subj) > 0 && sentenceCase(subj) {
			subj = slices.Clone(subj)
			subj[0].text = strings.ToLower(subj[0].text)
		}
		var item []token
		for _, t := range subj {
			if !t.quoted && (t.lower == "and" || t.lower == "or") {
				add(pol, itemTerm(item))
				item = nil
				continue
			}
			item = append(item, t)
		}
		add(pol, itemTerm(item))
		return true
	}
	return false
}

func words(toks []token) []string {
	var out []string
	for _, t := range toks {
		if t.punct != 0 {
			break
		}
		out = append(out, t.lower)
	}
	return out
}

func hasPrefix(ws, p []string) bool { return len(ws) >= len(p) && slices.Equal(ws[:len(p)], p) }

// itemTerm is the term an item of a scope names: a quoted phrase whole;
// else the words without the filler and stop words at either end
// ("the papers on sleep spindles please" is "sleep spindles"), cut to
// four words, keeping the case of named words only.
func itemTerm(item []token) string {
	for _, t := range item {
		if t.quoted {
			return t.text
		}
	}
	lo, hi := 0, len(item)
	skip := func(t token) bool { return filler[t.lower] || text.IsStopword(t.lower) }
	for lo < hi && skip(item[lo]) {
		lo++
	}
	for hi > lo && skip(item[hi-1]) {
		hi--
	}
	// Inside, a stop word ends the term ("sleep in rats" is "sleep"),
	// unless what follows is still the term's (a named thing).
	var ws []string
	for _, t := range item[lo:hi] {
		if text.IsStopword(t.lower) {
			break
		}
		w := t.lower
		if named(t.text) || capitalised(t.text) {
			w = t.text
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 || len(ws) > 4 {
		return ""
	}
	return strings.Join(ws, " ")
}

// namedIn lists the named things of words outside any scope: runs of
// capitalised or named words ("Viewstamped Replication", "ImageNet").
func namedIn(item []token) []string {
	var out, run []string
	end := func() {
		if len(run) > 0 {
			out = append(out, strings.Join(run, " "))
		}
		run = nil
	}
	for _, t := range item {
		switch {
		case t.quoted:
			end()
			out = append(out, t.text)
		case named(t.text) || capitalised(t.text) && t.lower != "i" && !text.IsStopword(t.lower):
			run = append(run, t.text)
		default:
			end()
		}
	}
	end()
	return out
}
