package ris_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/ris"
	"quarry/internal/research"
)

// format is RIS for the shared harness. RIS has no type for "unknown": an
// untyped record is written as GEN and read back as Misc (see
// TestUnknownTypeBecomesMisc), so the round trip compares it as Misc.
// Authors are written "Last, First, Suffix" (see Format.InvertsNames).
func format() biblitest.Format {
	f := biblitest.New(ris.NewReader, ris.NewWriter)
	f.Carried = biblitest.UntypedAsMisc
	f.LinePerRecord = true
	f.InvertsNames = true
	return f
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	_, out := format().RoundTrip(t, biblitest.Corpus(t))
	// Written with CRLF, one blank line between records.
	require.True(t, bytes.HasPrefix(out, []byte("TY  - JOUR\r\nTI  - Deep")))
	require.Contains(t, string(out), "\r\n ER  - this line looks like the end")
	require.Contains(t, string(out), "AN  - arXiv:2103.03404v2\r\n")
	require.Contains(t, string(out), "N1  - Quarry mark: relevant; seminal; read twice\r\nsecond line of the note\r\n")
}

func TestUnknownTypeBecomesMisc(t *testing.T) {
	t.Parallel()
	rec := biblio.Record{Paper: research.RawPaper{Title: "No type"}}
	got := format().Read(t, format().Write(t, []biblio.Record{rec}))
	require.Len(t, got, 1)
	require.Equal(t, biblio.Misc, got[0].Type)
}

func TestSamples(t *testing.T) {
	t.Parallel()
	type want struct {
		line                       int
		typ, title, venue, pages   string
		year                       int
		authors                    []string
		doi, arxiv, pmid, url, abs string
		keywords                   []string
		mark, note, problem        string
	}
	tests := []struct {
		file string
		want []want
	}{
		{"zotero.ris", []want{
			{line: 1, typ: biblio.Article, title: "Attention is not all you need: pure attention loses rank doubly exponentially with depth",
				venue: "Proceedings of Machine Learning Research", pages: "2793-2803", year: 2021,
				authors: []string{"Yihe Dong", "Jean-Baptiste Cordonnier", "Andreas Loukas"},
				doi:     "10.48550/arXiv.2103.03404", url: "https://proceedings.mlr.press/v139/dong21a.html",
				abs:      "Attention-based architectures have become ubiquitous in machine learning.",
				keywords: []string{"Transformers", "self-attention"}, mark: biblio.Relevant, note: "check the rank-collapse proof"},
			{line: 20, typ: biblio.Preprint, title: "Scaling Laws for Neural Language Models", year: 2020,
				authors: []string{"Jared Kaplan", "Sam McCandlish", "Dario Amodei"}, doi: "10.48550/arXiv.2001.08361",
				arxiv: "2001.08361", url: "http://arxiv.org/abs/2001.08361",
				abs:  "We study empirical scaling laws for language model performance on the cross-entropy loss.",
				note: "arXiv:2001.08361 [cs, stat]"},
			{line: 34, typ: biblio.Preprint, title: "Language Models are Few-Shot Learners", year: 2020,
				authors: []string{"Tom B. Brown"}, arxiv: "2005.14165v4", url: "https://arxiv.org/abs/2005.14165v4"},
			{line: 42, typ: biblio.Book, title: "Introduction to Information Retrieval", year: 2008,
				authors: []string{"Christopher D. Manning", "Prabhakar Raghavan", "Hinrich Schütze"}},
			{line: 53, typ: biblio.Chapter, title: "Evaluation in information retrieval", venue: "Introduction to Information Retrieval",
				year: 2008, pages: "151-175", authors: []string{"Christopher D. Manning"}},
		}},
		{"endnote.ris", []want{
			{line: 1, typ: biblio.Article, title: "Quantifying heterogeneity in a meta-analysis", venue: "Statistics in Medicine",
				year: 2002, pages: "1539-1558", pmid: "12111919", doi: "10.1002/sim.1186",
				authors:  []string{"Julian P. T. Higgins", "Simon G. Thompson", "Anna van der Berg Jr."},
				abs:      "The extent of heterogeneity in a meta-analysis partly determines the difficulty in drawing overall conclusions.\n\nWe develop measures of the impact of heterogeneity on a meta-analysis.",
				keywords: []string{"Meta-Analysis as Topic", "Models, Statistical"},
				mark:     biblio.Irrelevant, note: "Imported from Medline\nSecond line of the note; with a semicolon"},
			{line: 27, typ: biblio.Conference, title: "A vector space model for automatic indexing", venue: "Communications of the ACM",
				year: 1975, pages: "613", authors: []string{"Gerard Salton"}},
		}},
		{"mendeley.ris", []want{
			{line: 1, typ: biblio.Thesis, title: "Robust estimation for systematic reviews", year: 2019,
				authors: []string{"Lucía García-Márquez"}, note: "Thesis (PhD)"},
			{line: 8, typ: biblio.Report, title: "The PRISMA 2020 statement: an updated guideline for reporting systematic reviews",
				year: 2021, authors: []string{"M. J. Page"}, doi: "10.1136/bmj.n71", url: "https://doi.org/10.1136/bmj.n71"},
		}},
		{"scopus.ris", []want{
			{line: 1, typ: biblio.Article, title: "Screening prioritisation with active learning", venue: "Systematic Reviews",
				year: 2022, authors: []string{"J. Smith", "A.B. Doe"}, doi: "10.1186/s13643-022-01917-6",
				url:      "https://www.scopus.com/inward/record.uri?eid=2-s2.0-85126&partnerID=40&md5=abc",
				abs:      "Background: Screening is slow. Methods: We simulated. Results: 95% recall at 30% effort. © 2022, The Author(s).",
				keywords: []string{"Active learning", "Systematic review"}, note: "Cited By: 12; Export Date: 3 May 2023"},
		}},
		{"pubmed.ris", []want{
			{line: 1, typ: biblio.Article, title: "A pneumonia outbreak associated with a new coronavirus of probable bat origin",
				venue: "Nature", year: 2020, pages: "270-273", pmid: "32015507", doi: "10.1038/s41586-020-2012-7",
				authors: []string{"Peng Zhou", "Xing-Lou Yang"}},
		}},
		{"latin1.ris", []want{
			{line: 1, typ: biblio.Article, title: "Étude des réseaux à grande échelle", venue: "Revue française", year: 1998,
				authors: []string{"Jürgen Müller", "René François"}},
		}},
		{"broken.ris", []want{
			{line: 4, typ: biblio.Article, title: "First good record", year: 2001},
			{line: 9, problem: "record does not start with a TY tag"},
			{line: 13, typ: biblio.Article, title: "Second good record", authors: []string{"Kim Lee"}},
			{line: 16, typ: biblio.Article, title: "Third record follows one without ER", year: 2003},
			{line: 20, problem: "missing title"},
			{line: 24, typ: biblio.Article, title: "Last record at EOF without ER"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got := format().ReadFile(t, tt.file)
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				g := got[i]
				require.Equal(t, w.line, g.Line, "record %d", i)
				require.Equal(t, w.problem, g.Problem, "record %d", i)
				if w.problem != "" {
					continue
				}
				p := g.Paper
				require.Equal(t, w.typ, g.Type, "record %d", i)
				require.Equal(t, w.title, p.Title, "record %d", i)
				require.Equal(t, w.venue, p.Venue, "record %d", i)
				require.Equal(t, w.pages, p.Pages, "record %d", i)
				require.Equal(t, w.year, p.Year, "record %d", i)
				require.Equal(t, w.authors, p.Authors, "record %d", i)
				require.Equal(t, w.doi, p.DOI, "record %d", i)
				require.Equal(t, w.arxiv, p.ArxivID, "record %d", i)
				require.Equal(t, w.pmid, p.PMID, "record %d", i)
				require.Equal(t, w.url, p.URL, "record %d", i)
				require.Equal(t, w.abs, p.Abstract, "record %d", i)
				require.Equal(t, w.keywords, g.Keywords, "record %d", i)
				require.Equal(t, w.mark, g.Mark, "record %d", i)
				require.Equal(t, w.note, g.Note, "record %d", i)
				require.Empty(t, p.Source, "the caller sets Source")
				require.NoError(t, p.Validate())
			}
		})
	}
}

func TestTagLineTolerance(t *testing.T) {
	t.Parallel()
	in := "TY - JOUR\nTI   -  Spaced title\nPY  -2019\nER  -"
	got := biblitest.ReadAll(t, ris.NewReader(strings.NewReader(in)))
	require.Len(t, got, 1)
	// "PY  -2019" has no space after the dash: it is text, continuing TI.
	require.Equal(t, "Spaced title PY -2019", got[0].Paper.Title)
	require.Equal(t, 0, got[0].Paper.Year)
}

func TestReaderIOError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	r := ris.NewReader(io.MultiReader(strings.NewReader("TY  - JOUR\nTI  - A\n"), iotest.ErrReader(boom)))
	_, err := r.Next()
	require.ErrorIs(t, err, boom)
}

func TestLongLine(t *testing.T) {
	t.Parallel()
	abs := strings.Repeat("word ", 100_000)
	in := "TY  - JOUR\r\nTI  - Long\r\nAB  - " + abs + "\r\nER  - \r\n"
	got := biblitest.ReadAll(t, ris.NewReader(strings.NewReader(in)))
	require.Len(t, got, 1)
	require.Equal(t, strings.TrimSpace(abs), got[0].Paper.Abstract)
}

// TestReaderReportsAYearThatIsNotOne: PY that holds something other than
// a year is reported with its line and value, unless DA has the year;
// "n.d." is an unknown year.
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	in := "TY  - JOUR\nTI  - Dated\nPY  - 2020///\nER  - \n" +
		"TY  - JOUR\nTI  - From DA\nPY  - abc\nDA  - 2019/05/01\nER  - \n" +
		"TY  - JOUR\nTI  - Undated\nPY  - n.d.\nER  - \n" +
		"TY  - JOUR\nTI  - Bad\nPY  - abc\nER  - \n"
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 4)
	require.Equal(t, 2020, recs[0].Paper.Year)
	require.Equal(t, 2019, recs[1].Paper.Year)
	require.Empty(t, recs[2].Problem)
	require.Zero(t, recs[2].Paper.Year)
	require.Equal(t, 14, recs[3].Line)
	require.Equal(t, `year "abc" is not a year`, recs[3].Problem)
}
