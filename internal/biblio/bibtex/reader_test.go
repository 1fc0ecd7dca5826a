package bibtex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
)

// want is the part of a record a sample test checks; zero fields are
// checked too, so a missing field must really be missing.
type want struct {
	line                                  int
	typ, title                            string
	authors                               []string
	year                                  int
	venue, volume, issue, pages           string
	doi, arxiv, pmid, url, abstract, note string
	mark                                  string
	keywords                              []string
}

func check(t *testing.T, w want, rec biblio.Record) {
	t.Helper()
	require.Empty(t, rec.Problem)
	p := rec.Paper
	got := want{
		line: rec.Line, typ: rec.Type, title: p.Title, authors: p.Authors, year: p.Year,
		venue: p.Venue, volume: p.Volume, issue: p.Issue, pages: p.Pages, doi: p.DOI,
		arxiv: p.ArxivID, pmid: p.PMID, url: p.URL, abstract: p.Abstract, note: rec.Note,
		mark: rec.Mark, keywords: rec.Keywords,
	}
	require.Equal(t, w, got)
	require.NoError(t, p.Validate())
}

func TestReadSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []want
	}{
		{"zotero_bbt.bib", []want{
			{line: 1, typ: biblio.Article, title: "Deep Learning for Protein Structure Prediction: A Review",
				authors: []string{"John A. Smith", "Hans Müller", "World Health Organization"}, year: 2020,
				venue: "Nature Methods", volume: "17", issue: "3", pages: "245-252", doi: "10.1038/s41592-020-0001-x",
				url:      "https://www.nature.com/articles/s41592-020-0001-x",
				abstract: "Proteins fold into 3D structures.\n\nHere we review deep learning approaches & their limits (about 50% accuracy).",
				keywords: []string{"deep learning", "protein folding"}},
			{line: 22, typ: biblio.Preprint, title: "Attention Is All You Need",
				authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar"}, year: 2017,
				doi: "10.48550/arXiv.1706.03762", arxiv: "1706.03762", url: "http://arxiv.org/abs/1706.03762",
				mark: biblio.Relevant, note: "read the appendix first",
				keywords: []string{"Computer Science - Computation and Language", "Computer Science - Machine Learning"}},
			{line: 36, typ: biblio.Thesis, title: "Modelos estadísticos para datos ecológicos",
				authors: []string{"José Luis García"}, year: 2019, venue: "Universidad de Sevilla"},
		}},
		{"zotero.bib", []want{
			{line: 2, typ: biblio.Article, title: "Deep learning for Protein structure prediction",
				authors: []string{"John A. Smith", "Hans Müller"}, year: 2020, venue: "Nature Methods",
				volume: "17", issue: "3", pages: "245-252", doi: "10.1038/s41592-020-0001-x", pmid: "32123456",
				url:      "https://www.nature.com/articles/s41592-020-0001-x",
				abstract: "Proteins fold into 3D structures. Here we review deep learning approaches.",
				keywords: []string{"deep learning", "protein folding"}},
			// Zotero's plain export of an arXiv paper has no eprint field:
			// it stays Misc, and the arXiv ID is only in the note.
			{line: 22, typ: biblio.Misc, title: "Attention Is All You Need",
				authors: []string{"Ashish Vaswani", "Noam Shazeer"}, year: 2017,
				doi: "10.48550/arXiv.1706.03762", url: "http://arxiv.org/abs/1706.03762",
				note: "arXiv:1706.03762 [cs]", keywords: []string{"Computer Science - Computation and Language"}},
			{line: 34, typ: biblio.Chapter, title: "A chapter on things", authors: []string{"Jane Doe"},
				year: 2015, venue: "Handbook of Things", pages: "1-20"},
		}},
		{"scholar.bib", []want{
			{line: 1, typ: biblio.Article, title: "Attention is all you need",
				authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit", "Llion Jones", "Aidan N Gomez", "Łukasz Kaiser", "Illia Polosukhin"},
				year:    2017, venue: "Advances in neural information processing systems", volume: "30"},
			{line: 9, typ: biblio.Conference, title: "Deep residual learning for image recognition",
				authors: []string{"Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"}, year: 2016,
				venue: "Proceedings of the IEEE conference on computer vision and pattern recognition", pages: "770-778"},
			{line: 17, typ: biblio.Thesis, title: "Relaxation and its role in vision",
				authors: []string{"Geoffrey E Hinton"}, year: 1977, venue: "University of Edinburgh"},
			{line: 24, typ: biblio.Book, title: "Deep learning",
				authors: []string{"Ian Goodfellow", "Yoshua Bengio", "Aaron Courville"}, year: 2016, venue: "MIT press"},
		}},
		{"dblp.bib", []want{
			{line: 1, typ: biblio.Conference, title: "Attention is All you Need",
				authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Lukasz Kaiser", "Illia Polosukhin"},
				year:    2017, venue: "Advances in Neural Information Processing Systems 30: Annual Conference on Neural Information Processing Systems 2017, December 4-9, 2017, Long Beach, CA, USA",
				pages: "5998-6008", url: "https://proceedings.neurips.cc/paper/2017/hash/3f5ee243547dee91fbd053c1c4a845aa-Abstract.html"},
			{line: 21, typ: biblio.Article, title: "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
				authors: []string{"Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"}, year: 2018,
				venue: "CoRR", volume: "abs/1810.04805", arxiv: "1810.04805", url: "http://arxiv.org/abs/1810.04805"},
			{line: 39, typ: biblio.Report, title: "The TeX Book Errata", authors: []string{"Donald E. Knuth"},
				year: 1989, venue: "Stanford University", issue: "STAN-CS-89-1245"},
		}},
		{"jabref.bib", []want{
			{line: 3, typ: biblio.Article, title: "Literate Programming", authors: []string{"Donald E. Knuth"},
				year: 1984, venue: "The Computer Journal", volume: "27", issue: "2", pages: "97-111",
				doi: "10.1093/comjnl/27.2.97", keywords: []string{"programming", "documentation"}},
			{line: 19, typ: biblio.Conference, title: "On Interprocess Communication", authors: []string{"Leslie Lamport"},
				year: 1986, venue: "Proceedings of the Fifth ACM Symposium on Principles of Distributed Computing",
				pages: "1-15", url: "https://example.org/lamport_1986.pdf"},
		}},
		{"handtyped.bib", []want{
			{line: 10, typ: biblio.Article, title: "On random graphs I", authors: []string{"P. Erdős", "A. Rényi"},
				year: 1959, venue: "IEEE Transactions on Pattern Analysis and Machine Intelligence", issue: "6", pages: "290-297"},
			{line: 20, typ: biblio.Conference, title: "Naïve Bayes & SVMs: 50% better α-tuning with C# — a case study",
				authors: []string{"François Dupont", "José García", "Øystein Åsen", "Stanisław Lem", "Ludwig van Beethoven", "John Smith Jr.", "Barnes and Noble"},
				year:    2021, venue: "Proc. of the Int. Conf. on Straße Learning", pages: "10-20",
				abstract: "Line one continues here.\n\nSecond paragraph with bold and “quotes”.",
				keywords: []string{"bayes", "svm", "a, b"}},
			{line: 33, typ: biblio.Book, title: "The TeXbook", authors: []string{"Donald E. Knuth"}, year: 1984,
				venue: "Addison-Wesley", mark: biblio.Irrelevant},
			{line: 41, typ: biblio.Misc, title: "Škoda, ą, å, ā, ż, ğ, ç, à, ñ, ô, ß, æ, œ, ø, ł, ı, å, Å, Æ, Ø, Ł",
				authors: []string{"Émile Zola"}, year: 1880, url: "https://example.org/a_b~c"},
		}},
		{"latin1.bib", []want{
			{line: 1, typ: biblio.Article, title: "Études sur la qualité – une revue",
				authors: []string{"Jürgen Müller", "René François"}, year: 1999, venue: "Revue française"},
		}},
		{"crlf_bom.bib", []want{
			{line: 1, typ: biblio.Article, title: "Windows Line Endings", year: 2010,
				abstract: "First line wraps.\n\nSecond para."},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			recs := format().ReadFile(t, tt.file)
			require.Len(t, recs, len(tt.want))
			for i, w := range tt.want {
				check(t, w, recs[i])
			}
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
		{"@inproceedings{k, title={T}}", biblio.Conference},
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
	require.Equal(t, "Main: Sub", p.Title)
	require.Equal(t, 2019, p.Year)
	require.Equal(t, "4", p.Issue)
	require.Equal(t, "123456", p.PMID)
	require.Equal(t, "1901.00002", p.ArxivID)
	require.Equal(t, "10.1000/ABC_1", p.DOI)
	require.Equal(t, []string{"x", "y", "z"}, recs[0].Keywords)
	require.Equal(t, biblio.Article, recs[0].Type)
	require.JSONEq(t, `{"bibtex_key":"k","bibtex_type":"article","issn":"1234-5678"}`, string(recs[0].Extra))
}

// TestReaderReportsAYearThatIsNotOne: a year field that holds something
// other than a year is reported with its line and value; "in press" is an
// unknown year.
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader(`@article{a, title={Dated}, year={ca. 1850}}
@article{b, title={Pending}, year={in press}}
@article{c, title={Bad}, year={abc}}
@article{d, title={Too long}, year={12345}}
`)))
	require.Len(t, recs, 4)
	require.Equal(t, 1850, recs[0].Paper.Year)
	require.Empty(t, recs[1].Problem)
	require.Zero(t, recs[1].Paper.Year)
	require.Equal(t, 3, recs[2].Line)
	require.Equal(t, `year "abc" is not a year`, recs[2].Problem)
	require.Equal(t, `year "12345" is not a year`, recs[3].Problem)
}
