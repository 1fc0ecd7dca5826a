package dedup

import (
	"html"
	"quarry/internal/research"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// features is what the matcher compares: every field of a RawPaper reduced
// once, up front, to the form in which two databases' spellings agree.
type features struct {
	titleForm
	// alt is the title in its other language, when the record gives both
	// ("Wirkung von X auf Y [Effect of X on Y]"); nil otherwise, as for
	// most records.
	alt  *titleForm
	kind string // erratum, reply, comment, retraction… ("" for an article)

	year     int
	surnames []name // the first maxAuthors author surnames, in order
	// authors are the first maxAuthors names as given, for lists whose
	// surnames were read from a swapped format ("Ching-yi, Wu").
	authors []string
	group   bool // an author is a group ("ALTS Group", "NEURITES Investigators")
	doi     string
	arxiv   string
	pmid    string
	volume  string // leading number of the volume
	page    string // first page, only when it contains a digit
	// pageLo..pageHi is the numeric page range (0 when the pages are not
	// plain numbers), to tell overlapping ranges from distant ones.
	pageLo, pageHi int
	// issueLo..issueHi is the issue number or range ("4-5"); 0 when the
	// issue has no leading number ("Suppl").
	issueLo, issueHi int
	venue            string // normalised venue
	venueTyp         byte   // 'c' conference, 'j' journal, 0 unknown

	preprint  bool // an arXiv-style record with no publication venue or DOI
	published bool // has a non-preprint venue or DOI
}

// titleForm is one title of a record in the forms the matcher compares.
type titleForm struct {
	title string // cleaned, normalised, leading article dropped
	// prefixes are the title cut at each subtitle separator (":", " - ",
	// ". "), same form: a record may lack any trailing part.
	prefixes []string
	// digits are the numbers of the title in order, as digits ("Phase 2",
	// "Phase II", "HPV-16/18", "two-year"): typos rarely touch numbers,
	// different papers often differ only there.
	digits  string
	generic bool // "Editorial", "Book review": says nothing about which paper
}

var (
	htmlTag = regexp.MustCompile(`<[^>]{1,40}>`)
	// latexCmd matches \emph, \textit{… and accent commands \' \" \^ \` \~ \= \.
	latexCmd = regexp.MustCompile(`\\([a-zA-Z]+\s*|['"^` + "`" + `~=.])`)
	// trailingNote matches annotations in round brackets appended to titles
	// ("(Letter)", "(Editorial)"):
	// "(Provisional abstract)", "(Review)".
	trailingNote   = regexp.MustCompile(`(?i)\s*\(((provisional|structured|meeting|conference)? ?abstract|review|letter|editorial)\)\s*[.;]*\s*$`)
	kindPrefix     = regexp.MustCompile(`(?i)^\s*(erratum|errata|corrigendum|corrigenda|correction|retraction|retracted|expression of concern|reply|in reply|authors?'? reply|response|comment|commentary|editorial comment|re:)\b`)
	venueQualifier = regexp.MustCompile(`\([^()]*\)`)
)

// numberWords are spelled-out numbers, read as digits so that "two-year"
// and "2-year", "Part two" and "Part 2", "Second" and "2nd" agree and
// differ from "three".
var numberWords = map[string]string{
	"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	// Ordinals: "Second international consensus …" is not the third.
	"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6",
	"seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10",
}

// greek spells out Greek letters, which some databases keep ("interferon-γ")
// and others transliterate ("interferon-gamma").
var greek = strings.NewReplacer(
	"α", " alpha ", "β", " beta ", "γ", " gamma ", "δ", " delta ", "ε", " epsilon ",
	"κ", " kappa ", "λ", " lambda ", "μ", " mu ", "π", " pi ", "σ", " sigma ",
	"τ", " tau ", "ω", " omega ", "Α", " alpha ", "Β", " beta ", "Γ", " gamma ", "Δ", " delta ",
)

// romanNumbers are the numerals that mark parts, phases or sequels; "i"
// and "v" are also initials and words, so they count only after a word
// that takes a number (see numbered).
var romanNumbers = map[string]string{"ii": "2", "iii": "3", "iv": "4", "vi": "6", "vii": "7", "viii": "8", "ix": "9", "x": "10"}

// numbered are words after which "i" and "v" are numbers: "Part I",
// "Phase I", "Type V".
var numbered = map[string]bool{"part": true, "phase": true, "type": true, "stage": true, "grade": true, "class": true, "study": true, "trial": true, "section": true, "volume": true}

// genericWords start titles that recur for different items of one venue
// ("Editorial", "Introduction to the special issue", "Book review").
var genericWords = map[string]bool{
	"editorial": true, "editor": true, "editors": true, "introduction": true, "preface": true, "foreword": true,
	"letter": true, "letters": true, "book": true, "books": true, "review": true, "reviews": true, "news": true,
	"obituary": true, "index": true, "contents": true, "abstracts": true, "keynote": true, "plenary": true,
	"correspondence": true, "announcement": true, "announcements": true, "in": true, "untitled": true,
	"welcome": true, "message": true, "proceedings": true, "session": true, "panel": true,
	"withdrawn": true, "poster": true, "posters": true, "demo": true, "demos": true, "tutorial": true,
	"workshop": true, "invited": true, "discussion": true, "reply": true, "comment": true, "comments": true,
	"erratum": true, "correction": true, "retraction": true, "call": true, "guest": true,
}

// groupWords mark a group author, which one database lists and another
// replaces by its chair or leaves out.
var groupWords = map[string]bool{
	"group": true, "study": true, "investigators": true, "consortium": true, "collaboration": true,
	"collaborative": true, "committee": true, "society": true, "trial": true, "network": true,
	"association": true, "team": true, "collaborators": true, "writing": true, "working": true,
}

// hasGroupWord reports whether a name contains one of groupWords as a
// word, in any case, without allocating: it runs on every author.
func hasGroupWord(a string) bool {
	var buf [16]byte
	for i := 0; i < len(a); {
		for i < len(a) && !isASCIILetter(a[i]) {
			i++
		}
		j := i
		for j < len(a) && isASCIILetter(a[j]) {
			j++
		}
		if n := j - i; n >= 4 && n <= len(buf) {
			for k := range n {
				buf[k] = a[i+k] | 0x20
			}
			if groupWords[string(buf[:n])] {
				return true
			}
		}
		i = j
	}
	return false
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// venueStop are words dropped before comparing venues.
var venueStop = map[string]bool{"the": true, "of": true, "and": true, "on": true, "in": true, "for": true, "de": true}

// languages are the article languages some databases append after a
// full stop: "… after stroke. German".
var languages = map[string]bool{
	"Russian": true, "Chinese": true, "Spanish": true, "Czech": true, "Italian": true, "Polish": true,
	"Dutch": true, "Ukrainian": true, "German": true, "French": true, "Japanese": true, "Slovak": true,
	"Hungarian": true, "Portuguese": true, "Turkish": true, "Norwegian": true, "Danish": true, "Swedish": true,
	"Finnish": true, "Korean": true, "Hebrew": true, "Greek": true, "Croatian": true, "Serbian": true,
	"Romanian": true, "Bulgarian": true, "Persian": true, "Arabic": true,
}

// cleaned is a title with its annotations taken off.
type cleaned struct {
	main string
	// alt is a translation given beside the title in square brackets.
	alt string
	// notice is "correction" when an appended note says the record is an
	// erratum notice: "[Erratum]", or a citation of the corrected article,
	// "(vol 360, pg 542, 2009)" in Web of Science, "(Lancet (2009) 374
	// (1234))" in Embase. A note saying an erratum exists elsewhere
	// ("[Erratum appears in …]") leaves the record the article itself.
	notice string
}

// cleanTitle removes markup, database annotations and section labels but
// keeps punctuation, so that subtitle separators can still be found.
func cleanTitle(s string) cleaned {
	s = html.UnescapeString(s)
	// The regexps run only where their trigger character occurs: titles are
	// cleaned once per record, and most need none of this.
	if strings.IndexByte(s, '<') >= 0 {
		s = htmlTag.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, '\\') >= 0 {
		s = latexCmd.ReplaceAllString(s, "")
	}
	s = greek.Replace(s)
	s = strings.ReplaceAll(s, " & ", " and ")
	var c cleaned
	for range 6 {
		t := s
		if strings.IndexByte(t, '(') >= 0 {
			t = trailingNote.ReplaceAllString(t, "")
			if u, ok := stripCitationNote(t); ok {
				t, c.notice = u, "correction"
			}
		}
		t, inner := stripTrailingBracket(t)
		if t == s || strings.TrimSpace(t) == "" {
			break
		}
		switch {
		case noticeWords[strings.ToLower(strings.Trim(inner, " ."))]:
			c.notice = "correction"
		case c.alt == "" && isTranslation(inner):
			c.alt = inner
		}
		s = t
	}
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, ". "); i >= 0 && languages[strings.TrimSpace(s[i+2:])] {
		s = s[:i]
	}
	// A title wholly in brackets is a translation: "[Cognitive disorders …]".
	if strings.HasPrefix(s, "[") {
		s = strings.Trim(s, "[]. ")
	}
	c.main = stripLabel(s)
	return c
}

// noticeWords are bracketed notes that make the record an erratum notice.
var noticeWords = map[string]bool{"erratum": true, "errata": true, "correction": true, "corrigendum": true, "corrigenda": true}

// dbNote matches the start of a bracketed database annotation, as opposed
// to a translated title: "[Review]", "[33 refs]", "[Erratum appears in …]",
// "[Article in German]", "[author's transl]".
var dbNote = regexp.MustCompile(`(?i)^\s*(\d|review|erratum|errata|published|comment|retract|corrected|see |note|article|abstract|editorial|letter|case report|author|english|german|french|spanish|italian|japanese|chinese|russian|portuguese|dutch|polish|in process|epub|summary|structured|provisional|proceedings|conference|meeting|poster|thesis|dissertation|book|news|interview|dutch|danish|swedish|norwegian|finnish|hungarian|czech|turkish|korean|hebrew|greek)`)

// isTranslation reports whether a bracketed part of a title is a title in
// another language rather than a database note: a phrase of several words
// that no note starts with.
func isTranslation(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) >= 20 && strings.Count(s, " ") >= 3 && !dbNote.MatchString(s) &&
		!strings.Contains(strings.ToLower(s), "appears in") && !strings.ContainsAny(s, "[]")
}

var (
	// wosCitation is Web of Science's note on a correction's title: the
	// corrected article's location, "(vol 360, pg 542, 2009)".
	wosCitation = regexp.MustCompile(`(?i)^\s*vol(ume)?\.?\s*[0-9a-z]+\s*,\s*(pg|pp?|page|art(icle)?\.?\s*no)\.?\s*[0-9a-z-]+\s*,\s*(19|20)\d\d\s*$`)
	// embaseCitation is Embase's: "(Lancet (2009) 374 (1234))".
	embaseCitation = regexp.MustCompile(`\((19|20)\d\d\)\s*[0-9]`)
)

// stripCitationNote removes a trailing parenthetical that cites another
// publication's location and reports whether it found one.
func stripCitationNote(s string) (string, bool) {
	t := strings.TrimRight(s, " .;")
	if !strings.HasSuffix(t, ")") {
		return s, false
	}
	depth := 0
	for i := len(t) - 1; i > 0; i-- {
		switch t[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				inner := t[i+1 : len(t)-1]
				if wosCitation.MatchString(inner) || embaseCitation.MatchString(inner) {
					return strings.TrimSpace(t[:i]), true
				}
				return s, false
			}
		}
	}
	return s, false
}

// sectionLabels are journal section names some databases prefix to titles
// ("MEDICAL PROGRESS", "Editorial: …"): they say where, not what. Comments,
// replies and corrections are not labels: they make another record.
var sectionLabels = []string{
	"medical progress", "clinical practice", "current concepts", "review article", "clinical review",
	"systematic review", "review", "mini review", "mini-review", "editorial", "guest editorial", "invited editorial",
	"letter to the editor", "letters to the editor", "letter", "letters", "correspondence", "original article",
	"original research", "original contribution", "original investigation", "research letter", "research paper",
	"brief report", "brief communication", "short communication", "short report", "case report", "perspective",
	"viewpoint", "special article", "special report", "special communication", "retracted article", "retracted",
	"clinical investigation", "images in clinical medicine",
}

// stripLabel removes a section label from the start of a title: followed
// by a separator in any case ("Editorial: …", "Review - …"), or without one
// when the label is in capitals and the title is not ("MEDICAL PROGRESS
// Hepatitis C").
func stripLabel(s string) string {
	for _, l := range sectionLabels {
		if len(s) <= len(l) || !strings.EqualFold(s[:len(l)], l) {
			continue
		}
		rest := s[len(l):]
		trimmed := strings.TrimLeft(rest, " ")
		sep, size := utf8.DecodeRuneInString(trimmed)
		switch {
		case sep == ':' || strings.ContainsRune(".-–—", sep) && strings.HasPrefix(trimmed[size:], " "):
			trimmed = strings.TrimLeft(trimmed[size:], " ")
		case len(trimmed) < len(rest) && s[:len(l)] == strings.ToUpper(s[:len(l)]) &&
			trimmed != strings.ToUpper(trimmed):
		default:
			continue
		}
		// What is left must still be a title, not a word.
		if len(trimmed) >= shortTitle/2 && strings.Contains(trimmed, " ") {
			return trimmed
		}
		return s
	}
	return s
}

// stripTrailingBracket removes one square-bracketed annotation at the end
// of a title, nested or cut off: "… [Review] [33 refs]", "….[Erratum appears
// in Brain Inj. 2013 Note: Small, S [added]]", "… [Erra". It returns the
// title and what the brackets held.
func stripTrailingBracket(s string) (string, string) {
	s = strings.TrimRight(s, " .;")
	if !strings.HasSuffix(s, "]") {
		// A note cut off by a length limit: an unclosed "[" near the end.
		if i := strings.LastIndexByte(s, '['); i > 0 && !strings.Contains(s[i:], "]") && len(s)-i < 40 {
			return strings.TrimSpace(s[:i]), ""
		}
		return s, ""
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ']':
			depth++
		case '[':
			depth--
			if depth == 0 {
				return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1]
			}
		}
	}
	return s, ""
}

// normTitle normalises a cleaned title and drops a leading article.
func normTitle(s string) string {
	n := research.NormalizeTitle(s)
	for _, a := range []string{"the ", "a ", "an "} {
		if strings.HasPrefix(n, a) {
			return n[len(a):]
		}
	}
	return n
}

func extract(p research.RawPaper) features {
	var f features
	c := cleanTitle(p.Title)
	f.titleForm = form(c.main)
	if c.alt != "" {
		alt := form(c.alt)
		f.alt = &alt
	}
	seps := subtitleSeps(c.main, 1)
	if m := kindPrefix.FindStringSubmatch(c.main[:min(len(c.main), 40)]); m != nil {
		f.kind = kindOf(m[1])
	} else if len(seps) > 0 {
		// "Some title: erratum", "X: reply to the authors".
		rest := c.main[seps[0][1]:]
		if m := kindPrefix.FindStringSubmatch(rest[:min(len(rest), 40)]); m != nil {
			f.kind = kindOf(m[1])
		}
	}
	if f.kind == "" {
		f.kind = c.notice
	}

	f.year = p.Year
	f.authors = p.Authors[:min(len(p.Authors), maxAuthors)]
	for _, a := range p.Authors {
		if len(f.surnames) == maxAuthors {
			break
		}
		if s := surname(a); s != "" {
			f.surnames = append(f.surnames, name{compact: strings.ReplaceAll(s, " ", ""), last: lastWord(s)})
		}
		f.group = f.group || hasGroupWord(a)
	}
	f.doi = research.NormalizeDOI(p.DOI)
	f.arxiv = research.NormalizeArxivID(p.ArxivID)
	f.pmid = strings.TrimSpace(p.PMID)
	f.volume = leadingNumber(p.Volume)
	f.page = firstPage(p.Pages)
	f.pageLo, f.pageHi = numRange(p.Pages, true)
	f.issueLo, f.issueHi = numRange(p.Issue, false)
	f.venue = normVenue(p.Venue)
	f.venueTyp = venueType(f.venue)

	preprintDOI := strings.HasPrefix(f.doi, "10.48550/") || strings.HasPrefix(f.doi, "10.1101/")
	preprintVenue := f.venue == "" || isPreprintVenue(f.venue)
	f.published = (f.doi != "" && !preprintDOI) || !preprintVenue
	f.preprint = !f.published && (f.arxiv != "" || preprintDOI || (f.venue != "" && isPreprintVenue(f.venue)))
	return f
}

// form computes the compared forms of one cleaned title.
func form(clean string) titleForm {
	var t titleForm
	t.title = normTitle(clean)
	for _, loc := range subtitleSeps(clean, 4) {
		if loc[0] > 0 {
			t.prefixes = append(t.prefixes, normTitle(clean[:loc[0]]))
		}
	}
	t.digits = numbersOf(t.title)
	if first, _, _ := strings.Cut(t.title, " "); genericWords[first] || !strings.Contains(t.title, " ") {
		t.generic = true
	}
	return t
}

// dashes are the characters exports put between two pages: hyphen-minus,
// en and em dash, Unicode hyphen and non-breaking hyphen, minus sign.
const dashes = "-–—‐‑−"

// numRange reads a leading number or range: "945-948" → 945, 948; with
// pages, an abbreviated end ("946-9") is completed to 949. It returns
// zeros when the field does not start with a digit ("e12724", "Suppl").
func numRange(s string, pages bool) (int, int) {
	s = strings.TrimSpace(s)
	lo, n := leadingInt(s)
	if n == 0 || lo == 0 {
		return 0, 0
	}
	rest := strings.TrimLeft(s[n:], " ")
	if rest == "" || !strings.ContainsRune(dashes, []rune(rest)[0]) {
		return lo, lo
	}
	rest = strings.TrimLeft(rest, dashes+" ")
	hi, m := leadingInt(rest)
	if m == 0 {
		return lo, lo
	}
	if pages && m < n {
		// "946-9": the end repeats the start's leading digits.
		if full, err := strconv.Atoi(s[:n-m] + rest[:m]); err == nil {
			hi = full
		}
	}
	if hi < lo {
		return lo, lo
	}
	return lo, hi
}

// leadingInt parses the digits at the start of s (at most 9) and says how
// many bytes it read.
func leadingInt(s string) (int, int) {
	v, n := 0, 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + int(s[n]-'0')
		n++
	}
	return v, n
}

// subtitleSeps returns up to limit [start, end) spans of subtitle
// separators in s: ":", " - " (or en/em dash), and ". ", "? ", "! ".
func subtitleSeps(s string, limit int) [][2]int {
	var out [][2]int
	for i := 0; i < len(s) && len(out) < limit; i++ {
		switch c := s[i]; {
		case c == ':':
			out = append(out, [2]int{i, i + 1})
		case (c == '.' || c == '?' || c == '!') && i+1 < len(s) && s[i+1] == ' ':
			out = append(out, [2]int{i, i + 2})
		case c == ' ' && i > 0:
			rest := s[i+1:]
			for _, d := range []string{"- ", "– ", "— "} {
				if strings.HasPrefix(rest, d) {
					out = append(out, [2]int{i, i + 1 + len(d)})
					i += len(d)
					break
				}
			}
		}
	}
	return out
}

// numbersOf concatenates the numbers of a normalised title in order:
// digits as written ("10 000" and "10000" agree), roman numerals and
// number words as digits.
func numbersOf(title string) string {
	var b []byte
	prev := ""
	for title != "" {
		tok, rest, _ := strings.Cut(title, " ")
		title = rest
		n := len(b)
		for k := 0; k < len(tok); k++ {
			if tok[k] >= '0' && tok[k] <= '9' {
				b = append(b, tok[k])
			}
		}
		if len(b) == n && len(tok) <= 7 {
			switch {
			case romanNumbers[tok] != "" && tok != "x":
				b = append(b, romanNumbers[tok]...)
			case (tok == "i" || tok == "v" || tok == "x") && numbered[prev]:
				b = append(b, map[string]string{"i": "1", "v": "5", "x": "10"}[tok]...)
			case numberWords[tok] != "":
				b = append(b, numberWords[tok]...)
			}
		}
		prev = tok
	}
	return string(b)
}

func kindOf(word string) string {
	w := strings.ToLower(word)
	switch {
	case strings.HasPrefix(w, "errat"), strings.HasPrefix(w, "corrig"), strings.HasPrefix(w, "correction"):
		return "correction"
	case strings.HasPrefix(w, "retract"), strings.HasPrefix(w, "expression"):
		return "retraction"
	case strings.Contains(w, "reply"), strings.HasPrefix(w, "response"):
		return "reply"
	default:
		return "comment"
	}
}

// maxAuthors bounds how many authors are compared: enough to recognise a
// list, and it keeps a 3,000-author physics paper from costing 3,000².
const maxAuthors = 12

// name is a surname in the two forms the matcher compares: without spaces
// ("debreucker" for "de Breucker"/"De Breucker") and its last word ("graaf"
// for "van der Graaf").
type name struct {
	compact, last string
}

// surname extracts a normalised family name from "Smith, J.", "Smith JA",
// "John Smith" or "J. Smith".
func surname(a string) string {
	a = strings.TrimSpace(a)
	if a == "" || len(a) <= 25 && strings.ContainsAny(a[:1], "aAnNeEuU[") && noAuthor[research.NormalizeTitle(a)] {
		return "" // the cheap checks first: this runs on every author
	}
	if i := strings.IndexByte(a, ','); i >= 0 {
		s := dropSuffix(research.NormalizeTitle(a[:i]))
		if s == "" {
			return research.NormalizeTitle(a[i+1:])
		}
		if isParticle(s) {
			// "van, Hamont D": the rest of the family name follows the comma.
			if rest := strings.Fields(a[i+1:]); len(rest) > 0 {
				return s + " " + research.NormalizeTitle(rest[0])
			}
		}
		return s
	}
	fields := strings.Fields(a)
	if len(fields) == 1 {
		return research.NormalizeTitle(fields[0])
	}
	// PubMed style "Smith JA": the trailing token is all initials.
	last := fields[len(fields)-1]
	if isInitials(last) {
		return research.NormalizeTitle(strings.Join(fields[:len(fields)-1], " "))
	}
	// "John Smith", "J. Smith", "Ludwig van Beethoven": the last name token
	// plus any lowercase particles before it.
	i := len(fields) - 1
	for i > 0 && isParticle(fields[i-1]) {
		i--
	}
	return research.NormalizeTitle(strings.Join(fields[i:], " "))
}

// noAuthor are what databases write where a record has no author: they
// name nobody, so they neither agree nor disagree with a list.
var noAuthor = map[string]bool{
	"anonymous": true, "anon": true, "no authors listed": true, "no author name available": true,
	"et al": true, "unknown": true, "author unknown": true,
}

// dropSuffix removes generational suffixes: "wright jr" -> "wright".
func dropSuffix(s string) string {
	for _, suf := range []string{" jr", " sr", " iii", " ii"} {
		if strings.HasSuffix(s, suf) {
			return s[:len(s)-len(suf)]
		}
	}
	return s
}

func isInitials(s string) bool {
	s = strings.ReplaceAll(s, ".", "")
	if s == "" || len(s) > 3 {
		return false
	}
	for _, r := range s {
		if !unicode.IsUpper(r) && r != '-' {
			return false
		}
	}
	return true
}

func isParticle(s string) bool {
	switch strings.ToLower(s) {
	case "van", "von", "de", "der", "den", "del", "della", "da", "di", "du", "la", "le", "ter", "ten", "dos", "das":
		return true
	}
	return false
}

func leadingNumber(s string) string {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return strings.TrimLeft(s[:i], "0")
}

// firstPage returns the first page ("S417", "e8", "1173") of a range, or ""
// when the field has no page number in it ("Suppl", "No pagination").
func firstPage(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, dashes+",; "); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	if !strings.ContainsAny(s, "0123456789") {
		return ""
	}
	return strings.TrimLeft(s, "0")
}

func normVenue(s string) string {
	s = html.UnescapeString(s)
	if strings.IndexByte(s, '(') >= 0 {
		// Edition qualifiers: "BMJ (Online)", "BMJ (Clinical research ed.)".
		s = venueQualifier.ReplaceAllString(s, " ")
	}
	n := research.NormalizeTitle(s)
	if n == "" {
		return ""
	}
	toks := strings.Fields(n)
	out := toks[:0]
	for _, t := range toks {
		if !venueStop[t] {
			if strings.Contains(t, "ae") || strings.Contains(t, "oe") {
				// British spelling: "gynaecology", "paediatrics", "oesophagus".
				t = strings.NewReplacer("ae", "e", "oe", "e").Replace(t)
			}
			out = append(out, t)
		}
	}
	return strings.Join(out, " ")
}

func venueType(v string) byte {
	for _, t := range strings.Fields(v) {
		switch t {
		case "conference", "proceedings", "proc", "symposium", "workshop", "congress", "meeting", "conf":
			return 'c'
		case "journal", "transactions", "trans", "letters", "j":
			return 'j'
		}
	}
	return 0
}

func isPreprintVenue(v string) bool {
	for _, t := range strings.Fields(v) {
		switch t {
		case "arxiv", "biorxiv", "medrxiv", "ssrn", "preprint", "preprints", "corr", "techrxiv", "chemrxiv", "psyarxiv", "osf":
			return true
		}
	}
	return false
}

// venuesCompatible reports whether two normalised venues may name the same
// journal: equal, or one an abbreviation of the other ("j trop pediatr" and
// "journal tropical pediatrics"), token by token in order.
func venuesCompatible(a, b string) bool {
	if a == "" || b == "" || a == b {
		return true
	}
	ta, tb := strings.Fields(a), strings.Fields(b)
	return abbreviates(ta, tb) || abbreviates(tb, ta) || acronymOf(ta, tb) || acronymOf(tb, ta)
}

// acronymOf reports whether the first word of x is an acronym of y's
// words: each word, in order, gives it one or more leading letters ("bmj"
// for "british medical journal", "amcis" for "americas conference
// information systems"; stop words are already gone).
func acronymOf(x, y []string) bool {
	if len(x) == 0 || len(y) < 2 || len(x[0]) < 2 || len(x[0]) > 8 {
		return false
	}
	var match func(acr string, words []string) bool
	match = func(acr string, words []string) bool {
		if len(words) == 0 {
			return acr == ""
		}
		w := words[0]
		for k := 1; k <= min(len(acr), len(w)); k++ {
			if acr[k-1] != w[k-1] {
				break
			}
			if match(acr[k:], words[1:]) {
				return true
			}
		}
		return false
	}
	var words []string
	for _, w := range y {
		if w[0] < '0' || w[0] > '9' { // years and numbers are not in acronyms
			words = append(words, w)
		}
	}
	return match(x[0], words)
}

// abbreviates reports whether every token of short is a prefix of a token
// of long, in order.
func abbreviates(ta, tb []string) bool {
	if len(ta) > len(tb) {
		return false
	}
	j := 0
	for _, t := range ta {
		for j < len(tb) && !strings.HasPrefix(tb[j], t) {
			j++
		}
		if j == len(tb) {
			return false
		}
		j++
	}
	return true
}
