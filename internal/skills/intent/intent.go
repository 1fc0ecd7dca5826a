package intent

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/text"
)

// maxConcepts caps the concepts taken from one question: more than a handful
// AND-ed together finds nothing.
const maxConcepts = 6

// Parser is the IntentParser that needs no network and no
// model: regular expressions for years, exclusions and study types, a
// keyword table for fields of study, stop-word-split keyphrase extraction
// (RAKE) for concepts and a built-in synonym table. It is deterministic, so
// the same question always gives the same intent.
type Parser struct {
	now      func() time.Time
	synonyms map[string][]string // lower-case term -> the other terms of its group
	terms    [][]string          // table terms as words, longest first, for protected matching
	fields   []fieldMatcher
}

type fieldMatcher struct {
	field    string
	keywords []*regexp.Regexp
	weak     []bool // parallel to keywords: true for a word other fields use too
}

// NewIntentParser returns the offline parser. now is the clock relative
// phrases ("last 5 years") are read against; it is injected so tests and
// replays get the same years. A nil now means time.Now.
func New(now func() time.Time) *Parser {
	if now == nil {
		now = time.Now
	}
	p := &Parser{now: now, synonyms: map[string][]string{}}
	table := SynonymTable()
	for _, key := range sortedKeys(table) {
		group := append([]string{key}, table[key]...)
		for _, t := range group {
			t = strings.ToLower(t)
			if _, dup := p.synonyms[t]; dup {
				continue
			}
			var others []string
			for _, o := range group {
				if !strings.EqualFold(o, t) {
					others = append(others, o)
				}
			}
			p.synonyms[t] = others
			p.terms = append(p.terms, wordRE.FindAllString(t, -1))
		}
	}
	sort.SliceStable(p.terms, func(i, j int) bool { return len(p.terms[i]) > len(p.terms[j]) })
	for _, r := range fieldRules {
		fm := fieldMatcher{field: r.field}
		for _, kw := range r.keywords {
			weak := strings.HasPrefix(kw, "~")
			kw = strings.TrimPrefix(kw, "~")
			fm.weak = append(fm.weak, weak)
			pat := `\b` + regexp.QuoteMeta(strings.TrimSuffix(kw, "*"))
			if strings.HasSuffix(kw, "*") {
				pat += `[\w-]*`
			}
			fm.keywords = append(fm.keywords, regexp.MustCompile(pat+`\b`))
		}
		p.fields = append(p.fields, fm)
	}
	return p
}

// SynonymTable maps a term to the other words researchers use for it,
// across fields. It is a function returning a fresh map literal so no
// caller can change it for everyone. Lookups are case-insensitive and work
// from any member of a group.
func SynonymTable() map[string][]string {
	return map[string][]string{
		// computing
		"machine learning":             {"ml", "statistical learning"},
		"deep learning":                {"neural network", "deep neural network"},
		"artificial intelligence":      {"ai"},
		"natural language processing":  {"nlp", "computational linguistics"},
		"large language model":         {"llm", "foundation model"},
		"convolutional neural network": {"cnn"},
		"graph neural network":         {"gnn"},
		"reinforcement learning":       {"reward learning"},
		"computer vision":              {"image recognition", "image analysis"},
		"transfer learning":            {"domain adaptation"},
		"federated learning":           {"decentralized learning"},
		"explainable ai":               {"xai", "interpretable machine learning", "explainability"},
		"recommender system":           {"recommendation system", "collaborative filtering"},
		"information retrieval":        {"document retrieval", "search engine"},
		"question answering":           {"qa system"},
		"sentiment analysis":           {"opinion mining"},
		"internet of things":           {"iot"},
		"blockchain":                   {"distributed ledger"},
		"cybersecurity":                {"cyber security", "information security"},
		"software engineering":         {"software development"},
		"code review":                  {"code inspection"},
		"technical debt":               {"design debt"},
		"autonomous vehicle":           {"self-driving car", "driverless car"},
		// medicine and health
		"randomized controlled trial":  {"rct", "randomised controlled trial", "randomized clinical trial"},
		"meta-analysis":                {"meta analysis", "metaanalysis"},
		"covid-19":                     {"sars-cov-2", "coronavirus disease 2019", "covid"},
		"myocardial infarction":        {"heart attack", "acute myocardial infarction"},
		"children":                     {"paediatric", "pediatric", "child", "childhood"},
		"adolescents":                  {"teenagers", "adolescence", "youth"},
		"elderly":                      {"older adults", "older people", "geriatric"},
		"hypertension":                 {"high blood pressure"},
		"type 2 diabetes":              {"t2dm", "type 2 diabetes mellitus"},
		"stroke":                       {"cerebrovascular accident"},
		"cancer":                       {"neoplasm", "tumor", "tumour", "malignancy"},
		"breast cancer":                {"breast neoplasm", "breast carcinoma"},
		"depression":                   {"depressive disorder", "major depressive disorder"},
		"anxiety":                      {"anxiety disorder"},
		"physical activity":            {"exercise"},
		"smoking cessation":            {"quitting smoking", "tobacco cessation"},
		"alzheimer's disease":          {"alzheimer disease", "alzheimers"},
		"dementia":                     {"neurocognitive disorder"},
		"autism":                       {"autism spectrum disorder", "asd"},
		"adhd":                         {"attention deficit hyperactivity disorder"},
		"ptsd":                         {"post-traumatic stress disorder", "posttraumatic stress disorder"},
		"quality of life":              {"qol", "health-related quality of life", "hrqol"},
		"cost-effectiveness":           {"cost effectiveness", "economic evaluation"},
		"ace inhibitors":               {"angiotensin-converting enzyme inhibitors", "ace inhibitor"},
		"statins":                      {"statin", "hmg-coa reductase inhibitors"},
		"antibiotics":                  {"antibiotic", "antimicrobial", "antibacterial"},
		"vaccination":                  {"vaccine", "immunization", "immunisation"},
		"telemedicine":                 {"telehealth", "ehealth", "remote consultation"},
		"electronic health records":    {"ehr", "electronic medical records", "emr"},
		"intensive care unit":          {"icu", "critical care"},
		"sepsis":                       {"septic shock", "septicemia"},
		"cognitive behavioral therapy": {"cbt", "cognitive behavioural therapy"},
		"mindfulness":                  {"meditation"},
		"opioids":                      {"opioid", "opiates"},
		"alcohol use":                  {"alcohol consumption", "alcohol drinking"},
		"air pollution":                {"particulate matter", "pm2.5"},
		// social science, education, economics, environment
		"socioeconomic status":     {"ses", "socio-economic status"},
		"social media":             {"social networking sites", "online social networks"},
		"unemployment":             {"joblessness"},
		"minimum wage":             {"wage floor"},
		"remote work":              {"telework", "working from home", "telecommuting"},
		"online learning":          {"e-learning", "distance learning"},
		"higher education":         {"university", "tertiary education"},
		"students":                 {"learners"},
		"teachers":                 {"educators"},
		"bullying":                 {"peer victimization"},
		"homelessness":             {"housing instability"},
		"immigrants":               {"migrants"},
		"loneliness":               {"social isolation"},
		"climate change":           {"global warming"},
		"greenhouse gas emissions": {"ghg emissions", "carbon emissions"},
		"renewable energy":         {"clean energy", "renewables"},
	}
}

// ParseIntent implements IntentParser.
func (p *Parser) ParseIntent(ctx context.Context, question string) (research.ParsedIntent, error) {
	if err := ctx.Err(); err != nil {
		return research.ParsedIntent{}, err
	}
	topic := cleanQuestion(question)
	if topic == "" {
		return research.ParsedIntent{}, fault.Errorf(fault.EInvalid, "the research question is empty")
	}
	if len(topic) > research.MaxQuestionLength {
		return research.ParsedIntent{}, fault.Errorf(fault.EInvalid, "the research question is longer than %d characters; shorten it to the question itself", research.MaxQuestionLength)
	}
	in := research.ParsedIntent{Topic: topic}
	s := strings.ToLower(topic)
	// Quoted phrases first: they are what the researcher insists on and
	// must not be split by the rules below. A quoted phrase after an
	// exclusion cue (without "prompt engineering") is one they insist on
	// leaving out.
	var quoted, quotedOut []string
	s = replaceAll(quotedExclusion, s, func(m []string) {
		if ph := strings.Join(strings.Fields(m[1]), " "); ph != "" && !text.ContainsFold(quotedOut, ph) {
			quotedOut = append(quotedOut, ph)
		}
	})
	s = replaceAll(quotedPhrase, s, func(m []string) {
		if ph := strings.Join(strings.Fields(m[1]), " "); ph != "" && !text.ContainsFold(quoted, ph) {
			quoted = append(quoted, ph)
		}
	})
	in.IncludeTerms = quoted
	s, in.YearRange = yearRange(s, p.now())
	if in.YearRange == (research.YearRange{}) {
		s, in.YearRange = p.bareYear(topic, s, p.now())
	}
	s, excluded := exclusions(s)
	for _, e := range excluded {
		if !text.ContainsFold(quotedOut, e) {
			quotedOut = append(quotedOut, e)
		}
	}
	in.ExcludeTerms = quotedOut
	in.FieldsOfStudy = p.fieldsOfStudy(s + " , " + strings.Join(quoted, " , "))
	s, in.StudyTypes = studyTypes(s)
	in.Concepts = p.concepts(s, quoted, acronyms(topic), leadSentence(question))
	if len(in.Concepts) == 0 {
		return research.ParsedIntent{}, fault.Errorf(fault.EInvalid, "the research question has no searchable terms; say what the papers should be about")
	}
	if err := in.Validate(); err != nil {
		return research.ParsedIntent{}, err
	}
	return in, nil
}

// SynonymsOf returns the other terms for term from the synonym table,
// trying the singular of a plural too; nil if the table has none.
func (p *Parser) SynonymsOf(term string) []string {
	t := strings.ToLower(strings.Join(strings.Fields(term), " "))
	for _, v := range []string{t, singular(t)} {
		if syn, ok := p.synonyms[v]; ok {
			return append([]string(nil), syn...)
		}
	}
	return nil
}

// leadSentence is the first line or sentence of a question that has more
// than one, lower-cased with its words joined by single spaces; "" for a
// question of one sentence.
func leadSentence(q string) string {
	q = strings.TrimSpace(q)
	end := len(q)
	if i := strings.IndexByte(q, '\n'); i >= 0 {
		end = i
	}
	for _, sep := range []string{". ", "? ", "! "} {
		if i := strings.Index(q[:end], sep); i >= 0 {
			end = i
		}
	}
	rest := strings.TrimSpace(strings.TrimLeft(q[end:], ".?!"))
	if rest == "" {
		return ""
	}
	return strings.Join(wordRE.FindAllString(strings.ToLower(q[:end]), -1), " ")
}

func cleanQuestion(q string) string {
	q = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, q)
	q = strings.Join(strings.Fields(q), " ")
	return strings.TrimSpace(strings.TrimRight(q, "?!. "))
}

var (
	quotedPhrase = regexp.MustCompile(`["“”]([^"“”]+)["“”]`)
	yearPat      = `(1[89]\d\d|2[01]\d\d)`
	dash         = `\s*(?:-|–|—|to|until|till|through|and)\s*`
	numberWords  = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "fifteen": 15, "twenty": 20, "a": 1, "a couple of": 2, "a few": 3}
	yearRules    = []struct {
		re    *regexp.Regexp
		apply func(m []string, now int, y *research.YearRange)
	}{
		{regexp.MustCompile(`\b(?:(?:published\s+)?(?:between|from)\s+)?` + yearPat + dash + yearPat + `\b`), func(m []string, _ int, y *research.YearRange) {
			y.From, y.To = atoi(m[1]), atoi(m[2])
		}},
		{regexp.MustCompile(`\b(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:last|past|previous|recent)\s+(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|a couple of|a few)\s+years?\b`), func(m []string, now int, y *research.YearRange) {
			n, ok := numberWords[m[1]]
			if !ok {
				n = atoi(m[1])
			}
			y.From, y.To = now-n, now
		}},
		{regexp.MustCompile(`\b(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:last|past|previous)\s+(decade|year)\b`), func(m []string, now int, y *research.YearRange) {
			n := 1
			if m[1] == "decade" {
				n = 10
			}
			y.From, y.To = now-n, now
		}},
		{regexp.MustCompile(`\b(?:(?:in|during)\s+)?(?:the\s+)?((?:19|20)\d)0s\b`), func(m []string, _ int, y *research.YearRange) {
			y.From = atoi(m[1]) * 10
			y.To = y.From + 9
		}},
		{regexp.MustCompile(`\b(?:published\s+)?(?:since|from|starting(?:\s+in)?|as\s+of)\s+` + yearPat + `\b`), func(m []string, _ int, y *research.YearRange) { y.From = atoi(m[1]) }},
		{regexp.MustCompile(`\b(?:published\s+)?(?:after|post)\s+` + yearPat + `\b`), func(m []string, _ int, y *research.YearRange) { y.From = atoi(m[1]) + 1 }},
		{regexp.MustCompile(`\b(?:published\s+)?(?:before|prior\s+to|pre)\s+` + yearPat + `\b`), func(m []string, _ int, y *research.YearRange) { y.To = atoi(m[1]) - 1 }},
		{regexp.MustCompile(`\b(?:published\s+)?(?:until|till|up\s+to|through|by)\s+` + yearPat + `\b`), func(m []string, _ int, y *research.YearRange) { y.To = atoi(m[1]) }},
		{regexp.MustCompile(`\b(?:published\s+)?(?:in|during)\s+` + yearPat + `\b`), func(m []string, _ int, y *research.YearRange) { y.From, y.To = atoi(m[1]), atoi(m[1]) }},
	}
)

// yearRange applies the year rules in order (ranges before single bounds)
// and removes what they matched, so "2015" never becomes a concept. "after
// 2015" excludes 2015 and "before 2010" excludes 2010; "last 5 years" is the
// current year and the five before it, whole years being the finest grain
// sources filter on.
func yearRange(s string, now time.Time) (string, research.YearRange) {
	var y research.YearRange
	for _, r := range yearRules {
		s = replaceAll(r.re, s, func(m []string) { r.apply(m, now.Year(), &y) })
	}
	if y.From != 0 && y.To != 0 && y.From > y.To {
		y.From, y.To = y.To, y.From
	}
	return s, y
}

var (
	// bareYearAtEnd is a year ending the question ("covid vaccines 2021",
	// "..., (2021)"), alone in its word: "COVID-19" has no four digits and
	// "v2021" is not alone.
	bareYearAtEnd = regexp.MustCompile(`(?:^|[\s,;(])\(?((?:19|20)\d\d)\)?$`)
	// countWords before a number make it a count, not a year ("more than
	// 2000", "n = 2000").
	countWords = map[string]bool{"than": true, "over": true, "under": true, "about": true, "around": true, "approximately": true, "approx": true, "nearly": true, "almost": true, "least": true, "most": true, "n": true, "=": true, "~": true, "<": true, ">": true, "with": true, "top": true, "first": true, "of": true, "to": true}
)

// bareYear reads a year ending the question as that year, as "in 2021" is,
// when no year rule matched. topic is the question as typed (case shows a
// name: "Horizon 2020", "Windows 2000" are not years), s the lower-case
// text the rules left, from which the year is removed. A future year is a
// target or a name ("Vision 2030"), a year after a count word is a number
// ("more than 2000"), and a synonym-table term ending in a year
// ("coronavirus disease 2019") is a term.
func (p *Parser) bareYear(topic, s string, now time.Time) (string, research.YearRange) {
	m := bareYearAtEnd.FindStringSubmatchIndex(topic)
	if m == nil {
		return s, research.YearRange{}
	}
	year := atoi(topic[m[2]:m[3]])
	before := strings.Fields(topic[:m[0]])
	if year > now.Year() {
		return s, research.YearRange{}
	}
	if len(before) > 0 {
		prev := strings.TrimRight(before[len(before)-1], ",;")
		if countWords[strings.ToLower(prev)] || isNumber(prev) || len(before) > 1 && isTitleCase(prev) {
			return s, research.YearRange{}
		}
	}
	low := strings.ToLower(strings.TrimRight(topic, ") "))
	for _, tw := range p.terms {
		term := strings.Join(tw, " ")
		if len(tw) > 1 && tw[len(tw)-1] == topic[m[2]:m[3]] && strings.HasSuffix(low, term) &&
			(len(low) == len(term) || !unicode.IsLetter(rune(low[len(low)-len(term)-1]))) {
			return s, research.YearRange{}
		}
	}
	if loc := bareYearAtEnd.FindStringIndex(s); loc != nil {
		s = s[:loc[0]] + " , "
	}
	return s, research.YearRange{From: year, To: year}
}

// isTitleCase reports whether w starts with an upper-case letter followed
// by lower-case ones: a name ("Horizon"), unlike an acronym ("COVID").
func isTitleCase(w string) bool {
	r := []rune(w)
	return len(r) > 1 && unicode.IsUpper(r[0]) && slices.ContainsFunc(r[1:], unicode.IsLower) && !slices.ContainsFunc(r[1:], unicode.IsUpper)
}

var (
	// exclusionCues are the words that introduce what to leave out.
	exclusionCues = `(?:not\s+(?:in|among|on|for|including|involving|about)|excluding|exclude|except(?:\s+for)?|without|other\s+than|but\s+not|apart\s+from|ignoring|rather\s+than)`
	// exclusionCue and bareNot run on past commas so a list after the cue
	// ("not in children, adolescents or infants") is seen whole;
	// cutExcludedList decides where the list ends.
	exclusionCue    = regexp.MustCompile(`\b` + exclusionCues + `\s+([^;:.?!()]+)`)
	quotedExclusion = regexp.MustCompile(`\b(?:` + exclusionCues + `|not)\s+["“”]([^"“”]+)["“”]`)
	// bareNot is "X not Y" ("transformers not RNNs", "on mood, not
	// anxiety"); it excludes Y only when its clause has no verb for "not"
	// to negate ("why do patients not adhere").
	bareNot = regexp.MustCompile(`\bnot\s+([^;:.?!()]+)`)
	// negatedVerbs are words that, earlier in the clause, make "not" negate
	// a verb, so what follows is part of the question, not an exclusion.
	negatedVerbs = map[string]bool{"do": true, "does": true, "did": true, "is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "can": true, "could": true, "should": true, "would": true, "will": true, "may": true, "might": true, "must": true, "have": true, "has": true, "had": true, "why": true, "whether": true, "or": true, "if": true, "who": true, "that": true, "which": true, "to": true}
	// notAnExclusion are words after a bare "not" that qualify rather than
	// name what to leave out ("not only", "not yet").
	notAnExclusion = map[string]bool{"only": true, "just": true, "yet": true, "necessarily": true, "always": true, "all": true, "enough": true, "very": true, "well": true, "much": true, "merely": true, "simply": true}
	phraseStop     = map[string]bool{"and": true, "or": true, "nor": true, "but": true, "since": true, "after": true, "before": true, "between": true, "during": true, "published": true, "from": true, "that": true, "which": true, "who": true, "where": true, "when": true, "while": true, "with": true, "versus": true, "vs": true, "compared": true, "using": true, "is": true, "are": true, "was": true, "were": true, "do": true, "does": true, "did": true, "to": true}
	// listJoiners join one excluded phrase to the next ("children or
	// adolescents"): the cue before the first applies to all of them.
	listJoiners = map[string]bool{"and": true, "or": true, "nor": true}
)

// exclusions finds "excluding animal studies", "not in children or
// adolescents", "without X", "except Y" and the like, returns the excluded
// phrases and removes them from s so they do not become concepts.
func exclusions(s string) (string, []string) {
	var out []string
	add := func(ps []string) {
		for _, p := range ps {
			if !text.ContainsFold(out, p) {
				out = append(out, p)
			}
		}
	}
	s = cutExclusions(exclusionCue, s, func(string, []string) bool { return false }, add)
	return cutExclusions(bareNot, s, func(before string, words []string) bool {
		clause := before[strings.LastIndexAny(before, ",;(")+1:]
		return notAnExclusion[words[0]] || slices.ContainsFunc(strings.Fields(clause), func(w string) bool { return negatedVerbs[w] })
	}, add), out
}

// cutExclusions replaces each match of re (a cue, then the text after it as
// group 1) by the words after the excluded list, which may carry other
// concepts or another cue, so scanning goes on from there. skip says, from
// the text before the match and the words after the cue, that this cue
// excludes nothing.
func cutExclusions(re *regexp.Regexp, s string, skip func(before string, words []string) bool, add func([]string)) string {
	for pos := 0; pos < len(s); {
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for i := range m {
			m[i] += pos
		}
		words := strings.Fields(strings.ReplaceAll(s[m[2]:m[3]], ",", " , "))
		if len(words) == 0 || skip(s[:m[0]], words) {
			pos = m[2]
			continue
		}
		phrases, keep := cutExcludedList(words)
		add(phrases)
		s = s[:m[0]] + " , " + strings.Join(words[keep:], " ") + s[m[3]:]
		pos = m[0] + len(" , ")
	}
	return s
}

// cutExcludedList takes the excluded phrases at the start of words: the
// first phrase and each one joined to it by "and", "or", "nor" or a comma
// ("children, adolescents or infants"). A joined phrase must start with a
// content word, and one after a bare comma must fill its comma-separated
// part with content words alone, so a new clause ("and its use in
// medicine", ", mortality in adults") stays in the question. keep is how
// many words the list took.
func cutExcludedList(words []string) (phrases []string, keep int) {
	p, keep := cutPhrase(words)
	if p == "" {
		return nil, keep
	}
	phrases = append(phrases, p)
	for keep < len(words) {
		j := keep
		comma := words[j] == ","
		if comma {
			j++
		}
		if j < len(words) && listJoiners[words[j]] {
			j++
		}
		if j == keep || j == len(words) || !contentWord(words[j]) {
			break
		}
		p, n := cutPhrase(words[j:])
		if p == "" {
			break
		}
		if comma && j == keep+1 && !wholeListItem(words[j:], n) {
			break
		}
		phrases = append(phrases, p)
		keep = j + n
	}
	return phrases, keep
}

// wholeListItem reports whether the first n words of words are content
// words that fill their part of a list, ending where it ends.
func wholeListItem(words []string, n int) bool {
	if n < len(words) && words[n] != "," && !listJoiners[words[n]] {
		return false
	}
	return !slices.ContainsFunc(words[:n], func(w string) bool { return !contentWord(w) })
}

// contentWord reports whether w can name something: not a stop word,
// question filler, connective or punctuation.
func contentWord(w string) bool {
	return w != "," && !text.IsStopword(w) && !questionFiller[w] && !phraseStop[w]
}

// cutPhrase takes the phrase at the start of words: up to four words,
// ending at a connective or comma, without leading or trailing stop words
// or leading question filler ("studies in animals" is "animals"). When
// filler is all there is, the filler is the phrase: "excluding reviews"
// leaves out reviews. Only words that name any paper at all ("excluding
// studies") leave nothing out. keep is how many words it consumed, so the
// caller can put the rest back.
func cutPhrase(words []string) (phrase string, keep int) {
	for keep < len(words) && keep < 4 && !phraseStop[words[keep]] && words[keep] != "," {
		keep++
	}
	trim := func(ph []string, lead func(string) bool) string {
		for len(ph) > 0 && lead(ph[0]) {
			ph = ph[1:]
		}
		for len(ph) > 0 && text.IsStopword(ph[len(ph)-1]) {
			ph = ph[:len(ph)-1]
		}
		return strings.Join(ph, " ")
	}
	if p := trim(words[:keep], func(w string) bool { return text.IsStopword(w) || questionFiller[w] }); p != "" {
		return p, keep
	}
	p := trim(words[:keep], text.IsStopword)
	if slices.ContainsFunc(strings.Fields(p), func(w string) bool { return !anyPaper[w] }) {
		return p, keep
	}
	return "", keep
}

// anyPaper are the filler words that fit every paper, so leaving them out
// would leave out everything.
var anyPaper = map[string]bool{
	"study": true, "studies": true, "paper": true, "papers": true, "article": true, "articles": true,
	"research": true, "literature": true, "evidence": true, "work": true, "works": true, "published": true,
}

// studyTypeRules map wording to one canonical study type. More specific
// wordings come first and matched text is removed, so "randomized clinical
// trial" is not also counted as "clinical trial".
var studyTypeRules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"randomized controlled trial", regexp.MustCompile(`\brandomi[sz]ed(?:\s+(?:controlled|clinical|control))?\s+trials?\b|\brcts?\b`)},
	{"systematic review", regexp.MustCompile(`\bsystematic\s+(?:literature\s+)?reviews?\b`)},
	{"meta-analysis", regexp.MustCompile(`\bmeta[\s-]?analy[sz](?:is|es|ses)\b`)},
	{"scoping review", regexp.MustCompile(`\bscoping\s+reviews?\b`)},
	{"literature review", regexp.MustCompile(`\b(?:literature|narrative)\s+reviews?\b`)},
	{"cohort study", regexp.MustCompile(`\b(?:prospective\s+|retrospective\s+)?cohorts?(?:\s+stud(?:y|ies))?\b`)},
	{"case-control study", regexp.MustCompile(`\bcase[\s-]control(?:\s+stud(?:y|ies))?\b`)},
	{"cross-sectional study", regexp.MustCompile(`\bcross[\s-]sectional(?:\s+(?:stud(?:y|ies)|surveys?))?\b`)},
	{"longitudinal study", regexp.MustCompile(`\blongitudinal(?:\s+stud(?:y|ies))?\b`)},
	{"observational study", regexp.MustCompile(`\bobservational\s+stud(?:y|ies)\b`)},
	{"clinical trial", regexp.MustCompile(`\bclinical\s+trials?\b`)},
	{"case report", regexp.MustCompile(`\bcase\s+(?:reports?|series)\b`)},
	{"case study", regexp.MustCompile(`\bcase\s+stud(?:y|ies)\b`)},
	{"mixed methods", regexp.MustCompile(`\bmixed[\s-]methods?\b`)},
	{"qualitative study", regexp.MustCompile(`\bqualitative(?:\s+(?:stud(?:y|ies)|research))?\b|\b(?:semi-structured\s+)?interviews?\b|\bfocus\s+groups?\b|\bethnograph(?:y|ic|ies)\b`)},
	{"survey", regexp.MustCompile(`\bsurveys?\b|\bquestionnaires?\b`)},
	{"user study", regexp.MustCompile(`\buser\s+stud(?:y|ies)\b`)},
	{"benchmark", regexp.MustCompile(`\bbenchmark(?:s|ing|ed)?\b`)},
	{"controlled experiment", regexp.MustCompile(`\b(?:controlled\s+)?experiments\b`)},
}

func studyTypes(s string) (string, []string) {
	var out []string
	for _, r := range studyTypeRules {
		s = replaceAll(r.re, s, func([]string) {
			if !text.ContainsFold(out, r.name) {
				out = append(out, r.name)
			}
		})
	}
	return s, out
}

// fieldRules name fields of study as Semantic Scholar and OpenAlex do, with
// the words that suggest them. A keyword ending in * matches as a prefix. A
// keyword starting with ~ is weak: other fields use the word too ("solar
// cell", "stress corrosion", "software evolution"), so alone it suggests
// nothing and only two weak words, or a weak and a strong one, name the
// field. Without that, "solar cell efficiency" was guessed as Biology and
// "stress corrosion cracking" as Psychology.
var fieldRules = []struct {
	field    string
	keywords []string
}{
	{"Medicine", []string{"patient*", "clinic*", "disease*", "~therap*", "~treatment*", "~trial*", "rct*", "hospital*", "mortality", "cancer*", "tumo*", "diabet*", "covid*", "sars-cov-2", "~infect*", "drug*", "~dose*", "surg*", "nurs*", "symptom*", "diagnos*", "~pain", "stroke", "cardi*", "heart", "myocardial", "hypertension", "sepsis", "septic", "vaccin*", "antibiotic*", "pediatric", "paediatric", "dementia", "alzheimer*", "obesity", "public health", "statin*", "opioid*", "icu", "intensive care", "pregnan*", "neonat*", "ace inhibitor*", "health*", "medic*"}},
	{"Computer Science", []string{"algorithm*", "machine learning", "deep learning", "neural network*", "software", "~programming", "compiler*", "database*", "computer*", "~computing", "ai", "artificial intelligence", "llm*", "language model*", "nlp", "natural language", "source code", "blockchain", "~cloud", "cyber*", "recommender*", "information retrieval", "~transformer*", "gpu*", "data mining", "internet of things", "iot", "code review*", "technical debt", "reinforcement learning", "federated learning"}},
	{"Psychology", []string{"depress*", "anxiety", "~cognitive", "~behavio*", "mental health", "wellbeing", "well-being", "~personality", "~emotion*", "~stress", "loneliness", "mindfulness", "cbt", "~motivation*", "adhd", "autism", "ptsd", "psycholog*"}},
	{"Economics", []string{"wage*", "income*", "employment", "unemployment", "labor", "labour", "~market*", "~price*", "inflation", "gdp", "~trade", "econom*", "~tax*", "poverty", "~financ*", "cost-effectiveness"}},
	{"Sociology", []string{"~social", "socio*", "inequalit*", "~gender", "racial", "ethnic*", "~communit*", "~famil*", "~migra*", "immigra*", "homeless*", "social media", "discriminat*"}},
	{"Education", []string{"student*", "teacher*", "~school*", "educat*", "classroom*", "curricul*", "~universit*", "pedagog*", "e-learning", "online learning", "learners"}},
	{"Political Science", []string{"~polic*", "election*", "voting", "voter*", "democra*", "~government*", "politic*", "parliament*"}},
	{"Environmental Science", []string{"climate", "emission*", "pollution", "biodiversity", "renewable*", "~sustainab*", "~carbon", "ecosystem*", "greenhouse", "global warming"}},
	{"Biology", []string{"gene", "genes", "genetic*", "genom*", "protein*", "~cell", "~cells", "~cellular", "~molecular", "~species", "~evolution*", "microbi*", "bacteri*", "dna", "rna", "mice", "mouse", "~animal*"}},
	{"Engineering", []string{"batter*", "~sensor*", "manufactur*", "~vehicle*", "~autonomous", "robot*", "power grid*", "~structural", "signal processing", "engineering", "solar cell*", "photovoltaic*", "fuel cell*", "corrosion", "crack*", "turbine*"}},
	{"Business", []string{"~management", "~firm*", "marketing", "~consumer*", "organisation*", "organization*", "entrepreneur*", "supply chain*", "startup*", "employee*", "remote work"}},
	{"Physics", []string{"quantum", "~particle*", "physics", "~optic*", "laser*"}},
	{"Chemistry", []string{"chemi*", "catalys*", "~molecule*", "~synthesis"}},
	{"Materials Science", []string{"~material*", "alloy*", "polymer*", "graphene", "nanoparticle*", "perovskite*", "corrosion"}},
	{"Mathematics", []string{"theorem*", "~proof*", "mathemat*", "~equation*", "~stochastic"}},
	{"Law", []string{"legal", "~law", "laws", "court*", "~regulation*", "gdpr", "legislation"}},
	{"Linguistics", []string{"linguistic*", "grammar*", "bilingual*", "language acquisition"}},
}

// fieldsOfStudy returns up to three fields whose keywords the question uses
// (a weak keyword counting half, a field needing one whole), most first,
// table order breaking ties.
func (p *Parser) fieldsOfStudy(s string) []string {
	type hit struct {
		field string
		n     int
		order int
	}
	var hits []hit
	for i, r := range p.fields {
		n := 0 // in half-points: a strong keyword 2, a weak one 1
		for i, kw := range r.keywords {
			if kw.MatchString(s) {
				n += 2
				if r.weak[i] {
					n--
				}
			}
		}
		if n >= 2 {
			hits = append(hits, hit{r.field, n, i})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
	var out []string
	for i, h := range hits {
		if i == 3 {
			break
		}
		out = append(out, h.field)
	}
	return out
}

// questionFiller are words that frame a question rather than name its
// subject; they split candidate phrases like stop words do.
var questionFiller = map[string]bool{
	"what": true, "which": true, "how": true, "why": true, "does": true, "do": true, "is": true, "are": true,
	"can": true, "effect": true, "effects": true, "impact": true, "impacts": true, "influence": true,
	"role": true, "association": true, "associations": true, "associated": true, "relationship": true,
	"relationships": true, "relation": true, "evidence": true, "study": true, "studies": true,
	"research": true, "papers": true, "paper": true, "articles": true, "article": true, "literature": true,
	"find": true, "show": true, "list": true, "looking": true, "look": true, "want": true, "need": true,
	"interested": true, "know": true, "tell": true, "recent": true, "current": true, "new": true,
	"novel": true, "published": true, "year": true, "years": true, "use": true, "using": true, "used": true,
	"based": true, "towards": true, "toward": true, "regarding": true, "related": true, "effectiveness": true,
	"efficacy": true, "compare": true, "compared": true, "comparing": true, "comparison": true,
	"differences": true, "difference": true, "different": true, "various": true, "best": true,
	"better": true, "improve": true, "improves": true, "improving": true, "affect": true, "affects": true,
	"work": true, "works": true, "known": true, "please": true, "give": true, "overview": true, "review": true,
	"reviews": true, "reduce": true, "reduces": true, "increase": true, "increases": true, "among": true,
	"across": true, "people": true, "there": true, "any": true, "whether": true, "versus": true,
}

// genericAlone are words too vague to be a concept on their own, though
// they are fine inside a phrase ("language models").
var genericAlone = map[string]bool{
	"model": true, "models": true, "method": true, "methods": true, "approach": true, "approaches": true,
	"technique": true, "techniques": true, "system": true, "systems": true, "outcome": true, "outcomes": true,
	"factor": true, "factors": true, "patients": true, "patient": true, "results": true, "data": true,
	"analysis": true, "performance": true, "trial": true, "trials": true, "risk": true, "level": true,
	"levels": true, "rate": true, "rates": true, "group": true, "groups": true, "type": true, "types": true,
	"way": true, "ways": true, "role": true, "issue": true, "issues": true,
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+(?:['’.\-][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]`)

// concepts ranks candidate phrases RAKE-style: text is split at stop words,
// filler and punctuation; each word scores degree/frequency and a phrase
// the sum of its words. Terms of the synonym table are kept whole even when
// they contain stop words ("quality of life"), and quoted phrases come first.
//
// In a question of several sentences or lines, the first says what it is
// about (a review's title before its criteria): its phrases rank before
// the rest, whose long phrases ("following inclusion criteria") RAKE
// would otherwise put first.
func (p *Parser) concepts(s string, quoted []string, acronyms map[string]bool, lead string) []research.Concept {
	toks := wordRE.FindAllString(s, -1)
	type cand struct {
		words     []string
		pos       int
		table     bool
		qualifier bool
	}
	var cands []cand
	var cur []string
	flush := func(pos int) {
		if len(cur) > 0 {
			q := qualifies(toks, pos-len(cur), cur)
			for _, piece := range splitRun(cur, acronyms) {
				cands = append(cands, cand{words: piece, pos: pos, qualifier: q})
			}
			cur = nil
		}
	}
	for i := 0; i < len(toks); i++ {
		if n, term := p.tableMatch(toks[i:]); n > 0 {
			flush(i)
			words := strings.Fields(term)
			cands = append(cands, cand{words: words, pos: i, table: true, qualifier: qualifies(toks, i, words)})
			i += n - 1
			continue
		}
		t := toks[i]
		r := []rune(t)[0]
		if (!unicode.IsLetter(r) && !unicode.IsDigit(r)) || text.IsStopword(t) || questionFiller[t] || isNumber(t) {
			flush(i)
			continue
		}
		cur = append(cur, t)
	}
	flush(len(toks))

	freq, deg := map[string]int{}, map[string]int{}
	for _, c := range cands {
		for _, w := range c.words {
			freq[w]++
			deg[w] += len(c.words)
		}
	}
	type scored struct {
		text      string
		score     float64
		pos       int
		qualifier bool
		lead      bool
	}
	var ranked []scored
	seen := map[string]bool{}
	for _, q := range quoted {
		seen[q] = true
	}
	for _, c := range cands {
		phrase := strings.Join(c.words, " ")
		if seen[phrase] || len(c.words) == 1 && !c.table && !usefulAlone(phrase) {
			continue
		}
		seen[phrase] = true
		sc := 0.0
		for _, w := range c.words {
			sc += float64(deg[w]) / float64(freq[w])
		}
		if c.table {
			sc += 2 // a known term of art beats an ad-hoc phrase of equal length
		}
		ranked = append(ranked, scored{phrase, sc, c.pos, c.qualifier, lead != "" && strings.Contains(lead, phrase)})
	}
	// Who or where the question is about ranks after what it is about,
	// whatever RAKE's scores say: the query builder's broad query takes
	// the top two concepts, and "older adults" (a table term, so scored
	// up) pushed "sleep" out of "sleep and memory consolidation in older
	// adults".
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].qualifier != ranked[j].qualifier {
			return !ranked[i].qualifier
		}
		if ranked[i].lead != ranked[j].lead {
			return ranked[i].lead
		}
		if ranked[i].score != ranked[j].score {
			return ranked[i].score > ranked[j].score
		}
		return ranked[i].pos < ranked[j].pos
	})
	var out []research.Concept
	for _, q := range quoted {
		out = append(out, research.Concept{Term: q, Synonyms: p.SynonymsOf(q)})
	}
	for _, r := range ranked {
		if len(out) == maxConcepts {
			break
		}
		out = append(out, research.Concept{Term: r.text, Synonyms: p.SynonymsOf(r.text)})
	}
	return out
}

// splitRun splits a run of three or more content words into the phrases
// it is made of, where the question shows the seams: an acronym typed in
// capitals leading it ("CRISPR genome editing"), a generic head ending it
// ("fall prevention programmes"), and, in four words or more, pairs of
// nouns with the adjectives before them ("acute kidney injury" +
// "biomarkers"). A three-word run with no seam stays whole: it is most
// often a term of art ("calcium channel blockers", "heart rate
// variability") that no rule could split right. A run kept whole is
// searched as an exact phrase, and four words in a row are seldom written
// exactly so.
func splitRun(run []string, acronyms map[string]bool) [][]string {
	if len(run) < 3 {
		return [][]string{run}
	}
	var out [][]string
	for len(run) > 1 && acronyms[run[0]] {
		out = append(out, run[:1])
		run = run[1:]
	}
	var tail [][]string
	if len(run) > 1 && genericHeads[run[len(run)-1]] {
		tail = [][]string{run[len(run)-1:]}
		run = run[:len(run)-1]
	}
	if len(run) < 4 {
		out = append(out, run)
		return append(out, tail...)
	}
	var cur []string
	nouns := 0
	for _, w := range run {
		cur = append(cur, w)
		if !adjectiveLike(w) {
			nouns++
		}
		if nouns == 2 {
			out = append(out, cur)
			cur, nouns = nil, 0
		}
	}
	switch {
	case len(cur) == 0:
	case nouns == 0 && len(out) > 0: // trailing adjectives belong to the last phrase
		out[len(out)-1] = append(out[len(out)-1], cur...)
	default:
		out = append(out, cur)
	}
	return append(out, tail...)
}

// genericHeads end a phrase as the kind of thing wanted ("therapies",
// "programmes") rather than what it is about, so splitRun sets them apart.
var genericHeads = map[string]bool{
	"therapy": true, "therapies": true, "treatment": true, "treatments": true, "intervention": true,
	"interventions": true, "program": true, "programs": true, "programme": true, "programmes": true,
	"strategy": true, "strategies": true, "approach": true, "approaches": true, "method": true,
	"methods": true, "technique": true, "techniques": true, "tool": true, "tools": true, "model": true,
	"models": true, "system": true, "systems": true, "framework": true, "frameworks": true,
	"application": true, "applications": true, "component": true, "components": true,
	"service": true, "services": true,
}

// adjectiveLike guesses from its ending, or a short list, whether w is an
// adjective, which needs the noun after it ("chronic obstructive pulmonary
// disease" is one phrase). The nouns with those endings that research
// questions use are listed as exceptions.
func adjectiveLike(w string) bool {
	if plainAdjectives[w] {
		return true
	}
	if adjectiveNouns[w] || len(w) < 5 {
		return false
	}
	for _, suf := range []string{"al", "ic", "ive", "ous", "ary", "ful", "less", "able", "ible", "ar", "ed"} {
		if strings.HasSuffix(w, suf) {
			return true
		}
	}
	return strings.HasSuffix(w, "-based") || strings.HasSuffix(w, "-related")
}

var (
	plainAdjectives = map[string]bool{
		"acute": true, "deep": true, "early": true, "late": true, "high": true, "low": true, "large": true,
		"small": true, "young": true, "old": true, "older": true, "severe": true, "mild": true, "open": true,
		"long": true, "short": true, "major": true, "minor": true, "rare": true, "common": true, "first": true,
		"human": true, "adult": true, "smart": true, "green": true, "urban": true, "rural": true,
	}
	adjectiveNouns = map[string]bool{
		"survival": true, "hospital": true, "animal": true, "signal": true, "trial": true, "referral": true,
		"withdrawal": true, "approval": true, "removal": true, "interval": true, "material": true,
		"journal": true, "potential": true, "capital": true, "terminal": true, "metal": true,
		"mineral": true, "crystal": true, "portal": true, "proposal": true, "renewal": true,
		"disposal": true, "tutorial": true, "manual": true, "pandemic": true, "epidemic": true,
		"clinic": true, "topic": true, "music": true, "logic": true, "traffic": true, "plastic": true,
		"alternative": true, "objective": true, "incentive": true, "initiative": true, "narrative": true,
		"perspective": true, "contraceptive": true, "additive": true, "library": true, "summary": true,
		"salary": true, "diary": true, "boundary": true, "vocabulary": true, "commentary": true,
		"variable": true, "vegetable": true, "speed": true, "hundred": true, "sugar": true, "radar": true,
		"lidar": true, "calendar": true, "seminar": true, "grammar": true, "pillar": true, "dollar": true,
		"scholar": true,
	}
)

// acronyms are the words the question typed in capitals ("CRISPR",
// "EEG"), in lower case; none when it has no lower-case letter at all.
func acronyms(topic string) map[string]bool {
	if !strings.ContainsFunc(topic, unicode.IsLower) {
		return nil
	}
	out := map[string]bool{}
	for _, w := range wordRE.FindAllString(topic, -1) {
		if len([]rune(w)) > 1 && !strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsUpper(r) }) {
			out[strings.ToLower(w)] = true
		}
	}
	return out
}

// qualifierPreps introduce who or where a question is about ("in
// children", "among teenagers", "for pregnant women").
var qualifierPreps = map[string]bool{"in": true, "among": true, "amongst": true, "for": true, "within": true, "across": true}

// qualifierHeads are the (singular) last words of phrases that name a
// population or a setting rather than a subject. The list is closed on
// purpose: after "in" or "for" most phrases are the subject ("deep learning
// for image segmentation", "advances in gene therapy").
var qualifierHeads = map[string]bool{
	"child": true, "children": true, "adolescent": true, "teenager": true, "teen": true, "youth": true,
	"adult": true, "elderly": true, "woman": true, "women": true, "man": true, "men": true, "girl": true,
	"boy": true, "infant": true, "neonate": true, "newborn": true, "toddler": true, "preschooler": true,
	"student": true, "pupil": true, "learner": true, "teacher": true, "nurse": true, "physician": true,
	"doctor": true, "clinician": true, "worker": true, "employee": true, "patient": true, "veteran": true,
	"smoker": true, "athlete": true, "mother": true, "father": true, "parent": true, "family": true,
	"caregiver": true, "carer": true, "immigrant": true, "migrant": true, "refugee": true, "resident": true,
	"population": true, "individual": true, "people": true, "person": true, "participant": true,
	"survivor": true, "user": true, "mice": true, "mouse": true, "rat": true, "rodent": true,
	"hospital": true, "icu": true, "unit": true, "school": true, "classroom": true, "country": true,
	"setting": true, "community": true, "clinic": true, "home": true, "workplace": true, "area": true,
	"region": true,
}

// qualifies reports whether words, starting at toks[start], name a
// population or setting introduced by a preposition ("in the ICU").
func qualifies(toks []string, start int, words []string) bool {
	last := words[len(words)-1]
	if !qualifierHeads[last] && !qualifierHeads[singular(last)] {
		return false
	}
	i := start - 1
	for i >= 0 && (toks[i] == "the" || toks[i] == "a" || toks[i] == "an") {
		i--
	}
	return i >= 0 && qualifierPreps[toks[i]]
}

// tableMatch reports how many tokens at the start of toks spell a synonym
// table term (the longest one), and that term's lower-case text.
func (p *Parser) tableMatch(toks []string) (int, string) {
	for _, tw := range p.terms {
		if len(tw) > len(toks) {
			continue
		}
		ok := true
		for i, w := range tw {
			if toks[i] != w && !(i == len(tw)-1 && singular(toks[i]) == w) {
				ok = false
				break
			}
		}
		if ok {
			return len(tw), strings.Join(toks[:len(tw)], " ")
		}
	}
	return 0, ""
}

func isNumber(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' }) < 0
}

func usefulAlone(w string) bool {
	if genericAlone[w] || len([]rune(w)) < 3 && !isUpperAcronymLike(w) {
		return false
	}
	for _, r := range w {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isUpperAcronymLike keeps two-letter tokens that carry letters and digits
// ("5g", "b12"); plain two-letter words are almost always noise.
func isUpperAcronymLike(w string) bool {
	hasDigit, hasLetter := false, false
	for _, r := range w {
		hasDigit = hasDigit || unicode.IsDigit(r)
		hasLetter = hasLetter || unicode.IsLetter(r)
	}
	return hasDigit && hasLetter
}

// singular strips a plain English plural so table lookups find "heart
// attacks" under "heart attack"; it only touches the last word.
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies") && len(s) > 4:
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "ss"), strings.HasSuffix(s, "us"), strings.HasSuffix(s, "is"):
		return s
	case strings.HasSuffix(s, "s") && len(s) > 3:
		return s[:len(s)-1]
	}
	return s
}

// replaceAll calls fn with the submatches of each match of re in s and
// returns s with the matches replaced by a phrase boundary.
func replaceAll(re *regexp.Regexp, s string, fn func(m []string)) string {
	return re.ReplaceAllStringFunc(s, func(match string) string {
		fn(re.FindStringSubmatch(match))
		return " , "
	})
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CutPhrase reads the phrase a cue such as "more on" or "exclude" points
// at: up to four words, stopping at a conjunction or comma, without leading
// question filler and trailing stopwords. The query builder reads the
// researcher's feedback with it, so a question and feedback are cut alike.
// keep is how many words the phrase spanned.
func CutPhrase(words []string) (phrase string, keep int) { return cutPhrase(words) }

// VagueWords are the words that frame a question ("effect", "review") or
// are too vague to be a concept alone: other skills never read them as
// content either.
func VagueWords() []string {
	out := make([]string, 0, len(questionFiller)+len(genericAlone))
	for w := range questionFiller {
		out = append(out, w)
	}
	for w := range genericAlone {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}
