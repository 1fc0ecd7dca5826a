package pipeline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// PaperType guesses a paper's publication type, so an export lands in the
// right kind of entry in a reference manager (a Nature paper as @article /
// JOUR, not @misc / GEN). RawPaper carries no type — the sources disagree
// on theirs and most have none — so it is read from what they do carry,
// strongest evidence first:
//
//  1. a preprint server's DOI (arXiv, bioRxiv, SSRN, …);
//  2. the venue's words, unless the venue is a preprint server: a thesis,
//     a technical report, a conference (proceedings, symposium, an
//     acronym such as NeurIPS or CVPR), a journal (journal, transactions,
//     letters, a brand such as Nature, The Lancet or JAMA) — an arXiv ID
//     does not make a published paper a preprint, since sources attach
//     the arXiv copy to the published record;
//  3. the DOI's registrant: one that publishes journals (Springer Nature,
//     AAAS, Elsevier, the BMJ, …) makes an article unless the DOI is a
//     book's; the ACL Anthology's make a conference paper;
//  4. on a preprint server and nowhere else: a preprint;
//  5. a journal's locators (volume, issue) or a PubMed ID: an article.
//
// "" when nothing tells (the writers then say misc / GEN): a guess from a
// publisher that prints both journals and proceedings (ACM, IEEE) would be
// wrong as often as right.
func PaperType(p research.RawPaper) string {
	doi := strings.ToLower(strings.TrimSpace(p.DOI))
	if preprintDOI(doi) {
		return biblio.Preprint
	}
	v := venueOf(p.Venue)
	onServer := v.preprintServer()
	if !onServer {
		if t := v.kind(); t != "" {
			return t
		}
	}
	if t := registrantKind(doi); t != "" {
		return t
	}
	switch {
	case onServer || (v.empty() && strings.TrimSpace(p.ArxivID) != ""):
		if doi == "" {
			return biblio.Preprint
		}
		return "" // published too, under a DOI that does not say where
	case strings.TrimSpace(p.Volume) != "" || strings.TrimSpace(p.Issue) != "":
		return biblio.Article
	case strings.TrimSpace(p.PMID) != "": // PubMed indexes journal articles
		return biblio.Article
	}
	return ""
}

var (
	// bioRxivDOI matches bioRxiv's and medRxiv's DOIs (10.1101/2020.03.22.002386,
	// older 10.1101/645572); Cold Spring Harbor's journals share the
	// prefix with a journal code (10.1101/gr.…).
	bioRxivDOI = regexp.MustCompile(`^10\.1101/(?:\d{4}\.\d{2}\.\d{2}\.)?\d+(?:v\d+)?$`)
	// bookDOI matches DOIs with an ISBN in them (10.1016/B978-…,
	// 10.1017/CBO978…, 10.1007/978-3-…, 10.1007/3-540-…) and the book
	// series of journal publishers (Oxford's acprof/oso, JSTOR's j.ctt,
	// ACS's bk-): chapters and books, not articles.
	bookDOI = regexp.MustCompile(`^10\.\d+/(?:(?:[a-z]{0,3}|1\.)97[89]-?\d|\d{1,5}-\d{1,7}-\d{1,7}-[\dx]|acprof|oso/|oxfordhb|acref|j\.ctt|bk-)|/97[89]\d`)
)

// preprintDOI reports whether doi is registered by a preprint server.
func preprintDOI(doi string) bool {
	if bioRxivDOI.MatchString(doi) {
		return true
	}
	prefix, _, _ := strings.Cut(doi, "/")
	switch prefix {
	case "10.48550", // arXiv
		"10.2139",  // SSRN
		"10.21203", // Research Square
		"10.20944", // Preprints.org
		"10.26434", // ChemRxiv
		"10.31219", // OSF Preprints
		"10.31234", // PsyArXiv
		"10.31235", // SocArXiv
		"10.31223": // EarthArXiv
		return true
	}
	return false
}

// registrantKind is what a DOI's registrant says: Article for publishers
// of journals (their DOIs with an ISBN are books and chapters, and IOP's
// conference series are proceedings), Conference for the ACL Anthology
// and IJCAI, "" otherwise — ACM and IEEE publish both, so their DOIs say
// nothing.
func registrantKind(doi string) string {
	prefix, suffix, ok := strings.Cut(doi, "/")
	if !ok {
		return ""
	}
	switch prefix {
	case "10.18653", "10.3115", "10.24963":
		return biblio.Conference
	case "10.1088": // IOP: journals, and conference series by ISSN
		for _, issn := range []string{"1742-6596", "1755-1315", "1757-899x"} {
			if strings.HasPrefix(suffix, issn+"/") {
				return biblio.Conference
			}
		}
	}
	if bookDOI.MatchString(doi) || !slices.Contains(journalRegistrants(), prefix) {
		return ""
	}
	return biblio.Article
}

// journalRegistrants are DOI prefixes of publishers whose DOIs (ISBN-ed
// ones aside) are journal articles.
func journalRegistrants() []string {
	return []string{
		"10.1001",  // American Medical Association (JAMA)
		"10.1002",  // Wiley
		"10.1007",  // Springer
		"10.1016",  // Elsevier (Cell, The Lancet)
		"10.1017",  // Cambridge University Press
		"10.1021",  // American Chemical Society
		"10.1023",  // Kluwer
		"10.1029",  // American Geophysical Union
		"10.1037",  // American Psychological Association
		"10.1038",  // Springer Nature (Nature)
		"10.1039",  // Royal Society of Chemistry
		"10.1046",  // Blackwell
		"10.1053",  // W.B. Saunders
		"10.1056",  // New England Journal of Medicine
		"10.1063",  // AIP Publishing
		"10.1073",  // PNAS
		"10.1080",  // Taylor & Francis
		"10.1083",  // Rockefeller University Press
		"10.1084",  // Journal of Experimental Medicine
		"10.1086",  // University of Chicago Press
		"10.1088",  // IOP Publishing
		"10.1093",  // Oxford University Press
		"10.1097",  // Wolters Kluwer
		"10.1098",  // Royal Society
		"10.1101",  // Cold Spring Harbor journals (bioRxiv is a preprint)
		"10.1103",  // American Physical Society
		"10.1111",  // Wiley-Blackwell
		"10.1113",  // The Physiological Society
		"10.1126",  // AAAS (Science)
		"10.1128",  // American Society for Microbiology
		"10.1136",  // BMJ
		"10.1137",  // SIAM
		"10.1140",  // EPJ
		"10.1146",  // Annual Reviews
		"10.1147",  // IBM journals
		"10.1148",  // Radiological Society of North America
		"10.1152",  // American Physiological Society
		"10.1155",  // Hindawi
		"10.1158",  // American Association for Cancer Research
		"10.1161",  // American Heart Association
		"10.1162",  // MIT Press journals
		"10.1164",  // American Thoracic Society
		"10.1172",  // Journal of Clinical Investigation
		"10.1175",  // American Meteorological Society
		"10.1177",  // SAGE
		"10.1182",  // American Society of Hematology
		"10.1186",  // BioMed Central
		"10.1200",  // American Society of Clinical Oncology
		"10.1210",  // Endocrine Society
		"10.1212",  // American Academy of Neurology
		"10.1214",  // Institute of Mathematical Statistics
		"10.1257",  // American Economic Association
		"10.1287",  // INFORMS
		"10.1371",  // PLOS
		"10.1523",  // Society for Neuroscience
		"10.2105",  // American Public Health Association
		"10.2307",  // JSTOR
		"10.3389",  // Frontiers
		"10.3390",  // MDPI
		"10.3758",  // Psychonomic Society
		"10.4049",  // American Association of Immunologists
		"10.7554",  // eLife
		"10.14778", // Proceedings of the VLDB Endowment
	}
}

// venue is a venue name as lower-case words, for matching words and
// phrases without tripping over punctuation ("Proc. Natl. Acad. Sci.",
// "IEEE/CVF", "NAACL-HLT").
type venue struct{ words []string }

func venueOf(s string) venue {
	return venue{strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })}
}

func (v venue) empty() bool { return len(v.words) == 0 }

// has reports whether the venue contains any of the words.
func (v venue) has(words ...string) bool {
	return slices.ContainsFunc(v.words, func(w string) bool { return slices.Contains(words, w) })
}

// hasPhrase reports whether the venue contains any of the phrases (words
// separated by single spaces) as whole words.
func (v venue) hasPhrase(phrases ...string) bool {
	s := " " + strings.Join(v.words, " ") + " "
	return slices.ContainsFunc(phrases, func(p string) bool { return strings.Contains(s, " "+p+" ") })
}

// is reports whether the venue is exactly one of names.
func (v venue) is(names ...string) bool {
	return slices.Contains(names, strings.Join(v.words, " "))
}

// preprintServer reports whether the venue is a preprint server.
func (v venue) preprintServer() bool {
	return v.has("arxiv", "biorxiv", "medrxiv", "chemrxiv", "psyarxiv", "socarxiv", "eartharxiv", "techrxiv",
		"ssrn", "preprint", "preprints", "precedings") || v.hasPhrase("research square")
}

// kind is what the venue's words say the paper is, "" when they say
// nothing. Words that name a meeting (proceedings, conference, …) beat
// journal words ("Journal of Physics: Conference Series" prints
// proceedings), except in the journals that are called proceedings
// (PNAS, Proceedings of the IEEE, of the Royal Society); journal words
// beat conference names and acronyms ("Transactions of the Association
// for Computational Linguistics" is a journal).
func (v venue) kind() string {
	meeting := v.has("conference", "conferences", "conf", "symposium", "symposia", "symp", "workshop", "workshops",
		"meeting", "congress", "colloquium")
	proceedings := v.has("proceedings", "proc")
	switch {
	case v.empty():
		return ""
	case v.has("thesis", "dissertation", "doctoral"):
		return biblio.Thesis
	case v.hasPhrase("technical report", "technical reports", "tech report", "tech rep", "research report",
		"working paper", "white paper", "technical memorandum"):
		return biblio.Report
	case proceedings && !meeting && (v.has("society", "soc", "academy", "acad") ||
		v.is("proceedings of the ieee", "proc ieee") || v.hasPhrase("vldb endowment", "proceedings of the acm on")):
		return biblio.Article
	case meeting || proceedings || v.hasPhrase("lecture notes"):
		return biblio.Conference
	case v.journal():
		return biblio.Article
	case v.conferenceName():
		return biblio.Conference
	}
	return ""
}

// journal reports whether the venue reads as a journal: a journal word
// (or its abbreviation, as PubMed writes them: "J Clin Epidemiol"), a
// brand that only names journals (Nature …, The Lancet …), or the name
// of a well-known one-word journal.
func (v venue) journal() bool {
	if v.has("journal", "journals", "j", "transactions", "trans", "letters", "lett", "annals", "ann", "annalen",
		"bulletin", "bull", "magazine", "quarterly", "review", "reviews", "rev", "surveys", "communications", "commun",
		"archives", "arch", "acta", "zeitschrift", "revue", "revista", "rivista", "gazette", "newsletter", "news", "reports") ||
		v.hasPhrase("foundations and trends") {
		return true
	}
	words := v.words
	if words[0] == "the" {
		words = words[1:]
	}
	if len(words) > 0 && slices.Contains([]string{"nature", "science", "cell", "lancet", "jama", "bmj", "nejm", "pnas",
		"plos", "bmc", "elife", "frontiers"}, words[0]) {
		return true
	}
	return v.is("neuron", "immunity", "circulation", "radiology", "biometrika", "biometrics", "econometrica", "gut",
		"blood", "brain", "chest", "thorax", "heart", "neurology", "pediatrics", "diabetes", "gastroenterology",
		"hepatology", "mind", "evolution", "sleep", "genetics", "development", "cognition", "cortex", "stroke",
		"computer", "machine learning", "nucleic acids research", "genome research")
}

// conferenceName reports whether the venue names a conference without
// saying so: its acronym (as Semantic Scholar and citations abbreviate
// them) or a name Semantic Scholar uses alone ("Neural Information
// Processing Systems").
func (v venue) conferenceName() bool {
	return v.has("neurips", "nips", "icml", "iclr", "aaai", "ijcai", "aistats", "acl", "naacl", "eacl", "emnlp",
		"coling", "conll", "lrec", "interspeech", "icassp", "cvpr", "iccv", "eccv", "wacv", "bmvc", "miccai",
		"kdd", "sigkdd", "sigir", "sigmod", "vldb", "icde", "cikm", "wsdm", "recsys", "osdi", "sosp", "nsdi",
		"eurosys", "asplos", "isca", "podc", "pods", "stoc", "focs", "popl", "pldi", "icfp", "oopsla", "icse",
		"issta", "ndss", "usenix", "sigcomm", "infocom", "mobicom", "chi", "uist", "cscw", "icra", "iros", "siggraph") ||
		v.hasPhrase("neural information processing systems", "computer vision and pattern recognition",
			"association for computational linguistics", "empirical methods in natural language processing",
			"knowledge discovery and data mining", "medical image computing and computer assisted intervention")
}
