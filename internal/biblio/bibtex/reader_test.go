package bibtex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
)

func TestReadSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []biblitest.Want
	}{
		{"zotero_bbt.bib", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Deep Learning for Protein Structure Prediction: A Review",
				Authors: []string{"John A. Smith", "Hans Müller", "World Health Organization"}, Year: 2020,
				Venue: "Nature Methods", Volume: "17", Issue: "3", Pages: "245-252", DOI: "10.1038/s41592-020-0001-x",
				URL:      "https://www.nature.com/articles/s41592-020-0001-x",
				Abstract: "Proteins fold into 3D structures.\n\nHere we review deep learning approaches & their limits (about 50% accuracy).",
				Keywords: []string{"deep learning", "protein folding"}},
			{Line: 22, Type: biblio.Preprint, Title: "Attention Is All You Need",
				Authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar"}, Year: 2017,
				DOI: "10.48550/arXiv.1706.03762", ArxivID: "1706.03762", URL: "http://arxiv.org/abs/1706.03762",
				Mark: biblio.Relevant, Note: "read the appendix first",
				Keywords: []string{"Computer Science - Computation and Language", "Computer Science - Machine Learning"}},
			{Line: 36, Type: biblio.Thesis, Title: "Modelos estadísticos para datos ecológicos",
				Authors: []string{"José Luis García"}, Year: 2019, Venue: "Universidad de Sevilla"},
		}},
		{"zotero.bib", []biblitest.Want{
			{Line: 2, Type: biblio.Article, Title: "Deep learning for Protein structure prediction",
				Authors: []string{"John A. Smith", "Hans Müller"}, Year: 2020, Venue: "Nature Methods",
				Volume: "17", Issue: "3", Pages: "245-252", DOI: "10.1038/s41592-020-0001-x", PMID: "32123456",
				URL:      "https://www.nature.com/articles/s41592-020-0001-x",
				Abstract: "Proteins fold into 3D structures. Here we review deep learning approaches.",
				Keywords: []string{"deep learning", "protein folding"}},
			// Zotero's plain export of an arXiv paper has no eprint field:
			// it stays Misc, and the arXiv ID comes from the arxiv.org URL
			// (as the RIS reader takes it from UR).
			{Line: 22, Type: biblio.Misc, Title: "Attention Is All You Need",
				Authors: []string{"Ashish Vaswani", "Noam Shazeer"}, Year: 2017,
				DOI: "10.48550/arXiv.1706.03762", ArxivID: "1706.03762", URL: "http://arxiv.org/abs/1706.03762",
				Note: "arXiv:1706.03762 [cs]", Keywords: []string{"Computer Science - Computation and Language"}},
			{Line: 34, Type: biblio.Chapter, Title: "A chapter on things", Authors: []string{"Jane Doe"},
				Year: 2015, Venue: "Handbook of Things", Pages: "1-20"},
		}},
		{"scholar.bib", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Attention is all you need",
				Authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit", "Llion Jones", "Aidan N Gomez", "Łukasz Kaiser", "Illia Polosukhin"},
				Year:    2017, Venue: "Advances in neural information processing systems", Volume: "30"},
			{Line: 9, Type: biblio.Conference, Title: "Deep residual learning for image recognition",
				Authors: []string{"Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"}, Year: 2016,
				Venue: "Proceedings of the IEEE conference on computer vision and pattern recognition", Pages: "770-778"},
			{Line: 17, Type: biblio.Thesis, Title: "Relaxation and its role in vision",
				Authors: []string{"Geoffrey E Hinton"}, Year: 1977, Venue: "University of Edinburgh"},
			{Line: 24, Type: biblio.Book, Title: "Deep learning",
				Authors: []string{"Ian Goodfellow", "Yoshua Bengio", "Aaron Courville"}, Year: 2016, Venue: "MIT press"},
		}},
		{"dblp.bib", []biblitest.Want{
			{Line: 1, Type: biblio.Conference, Title: "Attention is All you Need",
				Authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Lukasz Kaiser", "Illia Polosukhin"},
				Year:    2017, Venue: "Advances in Neural Information Processing Systems 30: Annual Conference on Neural Information Processing Systems 2017, December 4-9, 2017, Long Beach, CA, USA",
				Pages: "5998-6008", URL: "https://proceedings.neurips.cc/paper/2017/hash/3f5ee243547dee91fbd053c1c4a845aa-Abstract.html"},
			{Line: 21, Type: biblio.Article, Title: "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
				Authors: []string{"Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"}, Year: 2018,
				Venue: "CoRR", Volume: "abs/1810.04805", ArxivID: "1810.04805", URL: "http://arxiv.org/abs/1810.04805"},
			{Line: 39, Type: biblio.Report, Title: "The TeX Book Errata", Authors: []string{"Donald E. Knuth"},
				Year: 1989, Venue: "Stanford University", Issue: "STAN-CS-89-1245"},
		}},
		{"jabref.bib", []biblitest.Want{
			{Line: 3, Type: biblio.Article, Title: "Literate Programming", Authors: []string{"Donald E. Knuth"},
				Year: 1984, Venue: "The Computer Journal", Volume: "27", Issue: "2", Pages: "97-111",
				DOI: "10.1093/comjnl/27.2.97", Keywords: []string{"programming", "documentation"}},
			{Line: 19, Type: biblio.Conference, Title: "On Interprocess Communication", Authors: []string{"Leslie Lamport"},
				Year: 1986, Venue: "Proceedings of the Fifth ACM Symposium on Principles of Distributed Computing",
				Pages: "1-15", URL: "https://example.org/lamport_1986.pdf"},
		}},
		{"handtyped.bib", []biblitest.Want{
			{Line: 10, Type: biblio.Article, Title: "On random graphs I", Authors: []string{"P. Erdős", "A. Rényi"},
				Year: 1959, Venue: "IEEE Transactions on Pattern Analysis and Machine Intelligence", Issue: "6", Pages: "290-297"},
			{Line: 20, Type: biblio.Conference, Title: "Naïve Bayes & SVMs: 50% better α-tuning with C# — a case study",
				Authors: []string{"François Dupont", "José García", "Øystein Åsen", "Stanisław Lem", "Ludwig van Beethoven", "John Smith Jr.", "Barnes and Noble"},
				Year:    2021, Venue: "Proc. of the Int. Conf. on Straße Learning", Pages: "10-20",
				Abstract: "Line one continues here.\n\nSecond paragraph with bold and “quotes”.",
				Keywords: []string{"bayes", "svm", "a, b"}},
			{Line: 33, Type: biblio.Book, Title: "The TeXbook", Authors: []string{"Donald E. Knuth"}, Year: 1984,
				Venue: "Addison-Wesley", Mark: biblio.Irrelevant},
			{Line: 41, Type: biblio.Misc, Title: "Škoda, ą, å, ā, ż, ğ, ç, à, ñ, ô, ß, æ, œ, ø, ł, ı, å, Å, Æ, Ø, Ł",
				Authors: []string{"Émile Zola"}, Year: 1880, URL: "https://example.org/a_b~c"},
		}},
		{"latin1.bib", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Études sur la qualité – une revue",
				Authors: []string{"Jürgen Müller", "René François"}, Year: 1999, Venue: "Revue française"},
		}},
		{"crlf_bom.bib", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Windows Line Endings", Year: 2010,
				Abstract: "First line wraps.\n\nSecond para."},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			biblitest.CheckSamples(t, tt.want, format().ReadFile(t, tt.file))
		})
	}
}

// TestReadBroken checks that malformed entries are reported at the line
// where they start and that every entry after them is still read.
func TestReadBroken(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "broken.bib")
	type got struct {
		line    int
		title   string
		problem string
	}
	var gots []got
	for _, r := range recs {
		gots = append(gots, got{r.Line, r.Paper.Title, r.Problem})
	}
	require.Equal(t, []got{
		{1, "First", ""},
		{3, "", `entry "broken": entry not closed (unbalanced braces or quotes?) before the next entry at line 8`},
		{8, "Third", ""},
		{13, "", `entry "nocomma": expected ',' or '}', found 'y'`},
		{17, "Fifth", ""},
		{18, "", "missing title"},
		{19, `Seventh "quoted"`, ""},
	}, gots)
	require.Equal(t, []string{"J. Doe"}, recs[6].Paper.Authors)
}

func TestReadEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string // title or "!" + problem, per record
	}{
		{"Empty", "", nil},
		{"OnlyText", "no entries here\njust @ signs and {braces}\n", nil},
		{"Parens", "@book(k, title = {A (b) c})", []string{"A (b) c"}},
		{"NoKey", "@misc{title = {Keyless}}", []string{"Keyless"}},
		{"Concatenation", `@string{a = "x"} @misc{k, title = a # { and } # "y" # 2}`, []string{"x and y2"}},
		{"UndefinedMacro", "@misc{k, title = {T} # undefined}", []string{"T"}},
		{"UnclosedAtEOF", "@misc{k, title = {T}", []string{`!entry "k": entry not closed before the end of the file`}},
		{"UnclosedStringThenEntry", "@string{x = {oops\n@misc{k, title = {T}}", []string{"!malformed @string: entry not closed (unbalanced braces or quotes?) before the next entry at line 2", "T"}},
		{"CommentedOut", "% @misc{k, title = {Hidden}}\n@misc{j, title = {Shown}}", []string{"Shown"}},
		{"UnbalancedComment", "@comment{ {\n@misc{k, title = {After}}", []string{"After"}},
		{"EscapedBraces", `@misc{k, title = {a \{ b}}`, []string{"a { b"}},
		{"DuplicateField", "@misc{k, title = {First}, title = {Second}}", []string{"First"}},
		{"TrailingCommas", "@misc{k,, title = {T},,}", []string{"T"}},
		{"IndentedNextEntry", "@misc{k, title = {broken\n  @misc{j, title = {Next}}", []string{"!entry \"k\": entry not closed (unbalanced braces or quotes?) before the next entry at line 2", "Next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, r := range biblitest.ReadAll(t, NewReader(strings.NewReader(tt.in))) {
				if r.Problem != "" {
					got = append(got, "!"+r.Problem)
				} else {
					got = append(got, r.Paper.Title)
				}
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReadTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		entry string
		want  string
	}{
		{"@article{k, title={T}, journal={J}}", biblio.Article},
		{"@article{k, title={T}, eprint={2101.00001}, eprinttype={arXiv}}", biblio.Preprint},
		{"@article{k, title={T}, journal={}, eprint={2101.00001}, archiveprefix={arXiv}}", biblio.Article},
		// Published: a PubMed ID or a publisher's DOI; arXiv's own DOI is not one.
		{"@article{k, title={T}, pmid={123}, eprint={2101.00001}, eprinttype={arXiv}}", biblio.Article},
		{"@article{k, title={T}, doi={10.1000/x1}, eprint={2101.00001}, eprinttype={arXiv}}", biblio.Article},
		{"@article{k, title={T}, doi={10.48550/arXiv.2101.00001}, eprint={2101.00001}, eprinttype={arXiv}}", biblio.Preprint},
		{"@inproceedings{k, title={T}}", biblio.Conference},
		// A book naming another book it is in is a part of it.
		{"@proceedings{k, title={Paper}, booktitle={Proceedings of X}}", biblio.Chapter},
		{"@book{k, title={The {Cambridge} Companion}, booktitle={The Cambridge companion}}", biblio.Book},
		{"@book{k, title={Volume 2}, booktitle={Collected Works}, publisher={P}}", biblio.Book},
		{"@conference{k, title={T}}", biblio.Conference},
		{"@book{k, title={T}}", biblio.Book},
		{"@incollection{k, title={T}}", biblio.Chapter},
		{"@inbook{k, title={T}}", biblio.Chapter},
		{"@phdthesis{k, title={T}}", biblio.Thesis},
		{"@mastersthesis{k, title={T}}", biblio.Thesis},
		{"@thesis{k, title={T}}", biblio.Thesis},
		{"@techreport{k, title={T}}", biblio.Report},
		{"@report{k, title={T}}", biblio.Report},
		{"@misc{k, title={T}}", biblio.Misc},
		{"@misc{k, title={T}, eprint={hep-th/9901001}}", biblio.Preprint},
		{"@misc{k, title={T}, pubstate={preprint}}", biblio.Preprint},
		{"@online{k, title={T}}", biblio.Misc},
		{"@online{k, title={T}, eprint={2101.00001}, archivePrefix={arXiv}}", biblio.Preprint},
		{"@unpublished{k, title={T}}", biblio.Misc},
		{"@software{k, title={T}, eprint={2101.00001}, archiveprefix={arXiv}}", biblio.Misc},
		{"@dataset{k, title={T}}", biblio.Misc},
		{"@ARTICLE{k, title={T}}", biblio.Article},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			t.Parallel()
			recs := biblitest.ReadAll(t, NewReader(strings.NewReader(tt.entry)))
			require.Len(t, recs, 1)
			require.Empty(t, recs[0].Problem)
			require.Equal(t, tt.want, recs[0].Type)
		})
	}
}

func TestReadFields(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(`@article{k,
  TITLE = {Main}, Subtitle = {Sub},
  date = {2019-07-01},
  issue = {4},
  eprinttype = {pubmed}, eprint = {123456},
  arxivid = {1901.00002},
  issn = {1234-5678},
  keywords = {x;y , z},
  doi = {https://doi.org/10.1000/ABC\_1},
}`)))
	require.Len(t, recs, 1)
	p := recs[0].Paper
	require.Equal(t, "Main. Sub", p.Title, "biblatex prints a subtitle after a full stop")
	require.Equal(t, 2019, p.Year)
	require.Equal(t, "4", p.Issue)
	require.Equal(t, "123456", p.PMID)
	require.Equal(t, "1901.00002", p.ArxivID)
	require.Equal(t, "10.1000/ABC_1", p.DOI)
	require.Equal(t, []string{"x", "y", "z"}, recs[0].Keywords)
	require.Equal(t, biblio.Article, recs[0].Type)
	require.JSONEq(t, `{"bibtex_key":"k","issn":"1234-5678"}`, string(recs[0].Extra), "@article is what the writer writes for an article: not kept")
}

// TestReaderReportsAYearThatIsNotOne: a year field that holds something
// other than a year (a word, five digits, a date before the common era)
// imports without a year and with a warning quoting the value; "in press"
// is an unknown year without a warning (issue 22, item 7: the record was
// dropped with a Problem before).
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(`@article{a, title={Dated}, year={ca. 1850}}
@article{b, title={Pending}, year={in press}}
@article{c, title={Bad}, year={abc}}
@article{d, title={Too long}, year={12345}}
@article{e, title={Roman}, date={-0043-03-15}}
@article{f, title={Unknown}, year={unknown}}
`)))
	require.Len(t, recs, 6)
	require.Equal(t, 1850, recs[0].Paper.Year)
	require.Empty(t, recs[1].Problem)
	require.Zero(t, recs[1].Paper.Year)
	require.Empty(t, recs[1].Warnings)
	require.Equal(t, 3, recs[2].Line)
	for i, want := range map[int]string{2: `year "abc" is not a year`, 3: `year "12345" is not a year`, 4: `year "-0043-03-15" is not a year`, 5: `year "unknown" is not a year`} {
		require.Empty(t, recs[i].Problem, "the record imports")
		require.Zero(t, recs[i].Paper.Year)
		require.Equal(t, []string{want}, recs[i].Warnings)
	}
}

// TestReaderKeepsTheNameSplit: the authors' split is the file's (issue 22,
// item 1), read the way BibTeX reads names, and a braced name is an
// organisation kept whole.
func TestReaderKeepsTheNameSplit(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(`@article{a, title={T},
  author = {Wong Kee Song, Louis M. and El Khoury, Rita and van de Walle, Jr, Jan and Ludwig van Beethoven and {National Nurses United} and Jason Van Hulse and M{\"u}ller, J{\"o}rg}}
`)))
	require.Len(t, recs, 1)
	require.Equal(t, []biblio.Name{
		{Last: "Wong Kee Song", First: "Louis M."},
		{Last: "El Khoury", First: "Rita"},
		{Last: "van de Walle", Suffix: "Jr", First: "Jan"},
		{Last: "van Beethoven", First: "Ludwig"},
		{Literal: "National Nurses United"},
		{Last: "Hulse", First: "Jason Van"},
		{Last: "Müller", First: "Jörg"},
	}, recs[0].Names)
	require.Equal(t, "Louis M. Wong Kee Song", recs[0].Paper.Authors[0])
	require.Equal(t, "National Nurses United", recs[0].Paper.Authors[4])
}

// TestReaderWebOfScienceAndIdentifiers: Web of Science's double braces
// (issue 22, item 5) and a DOI or arXiv ID in url (item 6: the RIS reader
// takes them from UR).
func TestReaderWebOfScienceAndIdentifiers(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(`@article{ ISI:000123,
Author = {Smith, J.},
Title = {{A study}},
Year = {{2020}},
DOI = {{10.1016/j.x.2020.01.001}},
Keywords = {{alpha; beta gamma; delta}},
}
@misc{b, title={B}, url={http://dx.doi.org/10.1177/0022002798042001001}}
@misc{c, title={C}, url={https://arxiv.org/abs/2101.00001v2}}
`)))
	require.Len(t, recs, 3)
	require.Equal(t, "10.1016/j.x.2020.01.001", recs[0].Paper.DOI)
	require.Equal(t, []string{"alpha", "beta gamma", "delta"}, recs[0].Keywords)
	require.Equal(t, 2020, recs[0].Paper.Year)
	require.Equal(t, "10.1177/0022002798042001001", recs[1].Paper.DOI)
	require.Equal(t, "http://dx.doi.org/10.1177/0022002798042001001", recs[1].Paper.URL)
	require.Equal(t, "2101.00001v2", recs[2].Paper.ArxivID)
}

// TestReaderResolvesCrossref: an entry inherits the fields of the entry its
// crossref names, before or (as BibTeX wants) after it, records still come
// in file order, and a crossref to a missing key is a warning (issue 22,
// item 3: such a chapter was stored without year or venue).
func TestReaderResolvesCrossref(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(`@inbook{ch1, title={Chapter One}, author={Doe, Jane}, crossref={BOOK}, pages={1--20}}
@article{other, title={In between}, year={2001}}
@book{book, title={The Book}, year={2004}, publisher={Kumarian Press}, volume={2}, editor={Roe, Richard}, doi={10.1/book}}
@incollection{ch2, title={Chapter Two}, crossref={book}}
@incollection{ch3, title={Orphan}, crossref={nowhere}}
`)))
	require.Len(t, recs, 5)
	lines := []int{}
	for _, r := range recs {
		lines = append(lines, r.Line)
	}
	require.Equal(t, []int{1, 2, 3, 4, 5}, lines)
	for _, ch := range []biblio.Record{recs[0], recs[3]} {
		require.Equal(t, 2004, ch.Paper.Year, ch.Paper.Title)
		require.Equal(t, "The Book", ch.Paper.Venue)
		require.Equal(t, "2", ch.Paper.Volume)
		require.Empty(t, ch.Paper.DOI, "a chapter does not take the book's DOI")
		require.Contains(t, string(ch.Extra), `"publisher":"Kumarian Press"`)
		require.Empty(t, ch.Warnings)
	}
	require.Equal(t, "1-20", recs[0].Paper.Pages)
	require.Equal(t, []string{`crossref "nowhere": no entry with that key in the file; imported without the fields it would inherit`}, recs[4].Warnings)
}

// TestReaderCrossrefIsBounded: entries waiting for a crossref hold at most
// the budget; past it the oldest is given up on with a warning.
func TestReaderCrossrefIsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("@incollection{c, title={Waiting}, crossref={late}}\n")
	for i := 0; i < 200; i++ {
		b.WriteString("@misc{m, title={Filler " + strings.Repeat("x", 100) + "}}\n")
	}
	b.WriteString("@book{late, title={Late}, year={2000}}\n")
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(b.String())).WithLimits(biblio.Limits{MaxRecord: 1024}))
	require.Len(t, recs, 202)
	require.Zero(t, recs[0].Paper.Year)
	require.Len(t, recs[0].Warnings, 1)
	require.Contains(t, recs[0].Warnings[0], `crossref "late": not found within 4 KiB`)
}

// TestReaderKeepsAnUndefinedMacroAlone: a value that is only an undefined
// macro keeps its name; inside a concatenation it is empty, as in BibTeX.
func TestReaderKeepsAnUndefinedMacroAlone(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader("@article{k, title = {T} # undefined, journal = IEEE_J_PROC }\n")))
	require.Len(t, recs, 1)
	require.Equal(t, "T", recs[0].Paper.Title)
	require.Equal(t, "IEEE_J_PROC", recs[0].Paper.Venue)
}

// A name typed all in lower case is a first and a family name unless it
// starts with a particle, which BibTeX's rule reads as all family.
func TestLowerCaseNames(t *testing.T) {
	for in, want := range map[string]biblio.Name{
		"sudhin jacob":    {First: "sudhin", Last: "jacob"},
		"van gogh":        {Last: "van gogh"},
		"de la fuente":    {Last: "de la fuente"},
		"Jason van Hulse": {First: "Jason", Last: "van Hulse"},
	} {
		require.Equal(t, want, bibName(in), in)
	}
}

// MathSciNet writes the journal's abbreviation and its full name: the
// venue is the full name and both survive a round trip.
func TestFullJournalName(t *testing.T) {
	in := "@article{k, title={T}, journal={Adv. Math.}, fjournal={Advances in Mathematics}, year={2001}}\n"
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(in)))
	require.Len(t, recs, 1)
	require.Equal(t, "Advances in Mathematics", recs[0].Paper.Venue)
	var out strings.Builder
	w := NewWriter(&out)
	require.NoError(t, w.Write(recs[0]))
	require.NoError(t, w.Close())
	require.Contains(t, out.String(), "journal = {Adv. Math.}")
	require.Contains(t, out.String(), "fjournal = {Advances in Mathematics}")
	require.Equal(t, 1, strings.Count(out.String(), " journal = "), out.String())
	back := biblitest.ReadAll(t, NewReader(strings.NewReader(out.String())))
	require.Equal(t, recs[0].Paper, back[0].Paper)
}
