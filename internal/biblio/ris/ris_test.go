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
	tests := []struct {
		file string
		want []biblitest.Want
	}{
		{"zotero.ris", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Attention is not all you need: pure attention loses rank doubly exponentially with depth",
				Venue: "Proceedings of Machine Learning Research", Volume: "139", Pages: "2793-2803", Year: 2021,
				Authors: []string{"Yihe Dong", "Jean-Baptiste Cordonnier", "Andreas Loukas"},
				DOI:     "10.48550/arXiv.2103.03404", URL: "https://proceedings.mlr.press/v139/dong21a.html",
				Abstract: "Attention-based architectures have become ubiquitous in machine learning.",
				Keywords: []string{"Transformers", "self-attention"}, Mark: biblio.Relevant, Note: "check the rank-collapse proof"},
			{Line: 20, Type: biblio.Preprint, Title: "Scaling Laws for Neural Language Models", Year: 2020,
				Authors: []string{"Jared Kaplan", "Sam McCandlish", "Dario Amodei"}, DOI: "10.48550/arXiv.2001.08361",
				ArxivID: "2001.08361", URL: "http://arxiv.org/abs/2001.08361",
				Abstract: "We study empirical scaling laws for language model performance on the cross-entropy loss.",
				Note:     "arXiv:2001.08361 [cs, stat]"},
			{Line: 34, Type: biblio.Preprint, Title: "Language Models are Few-Shot Learners", Year: 2020,
				Authors: []string{"Tom B. Brown"}, ArxivID: "2005.14165v4", URL: "https://arxiv.org/abs/2005.14165v4"},
			{Line: 42, Type: biblio.Book, Title: "Introduction to Information Retrieval", Year: 2008,
				Authors: []string{"Christopher D. Manning", "Prabhakar Raghavan", "Hinrich Schütze"}},
			{Line: 53, Type: biblio.Chapter, Title: "Evaluation in information retrieval", Venue: "Introduction to Information Retrieval",
				Year: 2008, Pages: "151-175", Authors: []string{"Christopher D. Manning"}},
		}},
		{"endnote.ris", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Quantifying heterogeneity in a meta-analysis", Venue: "Statistics in Medicine",
				Year: 2002, Volume: "21", Issue: "11", Pages: "1539-1558", PMID: "12111919", DOI: "10.1002/sim.1186",
				Authors:  []string{"Julian P. T. Higgins", "Simon G. Thompson", "Anna van der Berg Jr."},
				Abstract: "The extent of heterogeneity in a meta-analysis partly determines the difficulty in drawing overall conclusions.\n\nWe develop measures of the impact of heterogeneity on a meta-analysis.",
				Keywords: []string{"Meta-Analysis as Topic", "Models, Statistical"},
				Mark:     biblio.Irrelevant, Note: "Imported from Medline\nSecond line of the note; with a semicolon"},
			{Line: 27, Type: biblio.Conference, Title: "A vector space model for automatic indexing", Venue: "Communications of the ACM",
				Year: 1975, Pages: "613", Authors: []string{"Gerard Salton"}},
		}},
		{"mendeley.ris", []biblitest.Want{
			{Line: 1, Type: biblio.Thesis, Title: "Robust estimation for systematic reviews", Year: 2019,
				Authors: []string{"Lucía García-Márquez"}, Note: "Thesis (PhD)"},
			{Line: 8, Type: biblio.Report, Title: "The PRISMA 2020 statement: an updated guideline for reporting systematic reviews",
				Year: 2021, Authors: []string{"M. J. Page"}, DOI: "10.1136/bmj.n71", URL: "https://doi.org/10.1136/bmj.n71"},
		}},
		{"scopus.ris", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Screening prioritisation with active learning", Venue: "Systematic Reviews",
				Year: 2022, Volume: "11", Issue: "1", Authors: []string{"J. Smith", "A.B. Doe"}, DOI: "10.1186/s13643-022-01917-6",
				URL:      "https://www.scopus.com/inward/record.uri?eid=2-s2.0-85126&partnerID=40&md5=abc",
				Abstract: "Background: Screening is slow. Methods: We simulated. Results: 95% recall at 30% effort. © 2022, The Author(s).",
				Keywords: []string{"Active learning", "Systematic review"}, Note: "Cited By: 12; Export Date: 3 May 2023"},
		}},
		{"pubmed.ris", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "A pneumonia outbreak associated with a new coronavirus of probable bat origin",
				Venue: "Nature", Year: 2020, Volume: "579", Issue: "7798", Pages: "270-273", PMID: "32015507", DOI: "10.1038/s41586-020-2012-7",
				Authors: []string{"Peng Zhou", "Xing-Lou Yang"}},
		}},
		{"latin1.ris", []biblitest.Want{
			{Line: 1, Type: biblio.Article, Title: "Étude des réseaux à grande échelle", Venue: "Revue française", Year: 1998,
				Authors: []string{"Jürgen Müller", "René François"}},
		}},
		{"broken.ris", []biblitest.Want{
			{Line: 4, Type: biblio.Article, Title: "First good record", Year: 2001},
			{Line: 9, Problem: "record does not start with a TY tag"},
			{Line: 13, Type: biblio.Article, Title: "Second good record", Authors: []string{"Kim Lee"}},
			{Line: 16, Type: biblio.Article, Title: "Third record follows one without ER", Year: 2003},
			{Line: 20, Problem: "missing title"},
			{Line: 24, Type: biblio.Article, Title: "Last record at EOF without ER"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			biblitest.CheckSamples(t, tt.want, format().ReadFile(t, tt.file))
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
