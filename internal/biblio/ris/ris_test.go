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
// a year (EndNote's template placeholder "Year", a BC date) is reported
// with its line and value as a warning, and the record imports without a
// year, unless DA has the year; "n.d." is an unknown year.
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	in := "TY  - JOUR\nTI  - Dated\nPY  - 2020///\nER  - \n" +
		"TY  - JOUR\nTI  - From DA\nPY  - abc\nDA  - 2019/05/01\nER  - \n" +
		"TY  - JOUR\nTI  - Undated\nPY  - n.d.\nER  - \n" +
		"TY  - JOUR\nTI  - Bad\nPY  - abc\nER  - \n" +
		"TY  - JOUR\nTI  - EndNote template\nPY  - Year\nDO  - 10.1/x\nER  - \n" +
		"TY  - BOOK\nTI  - Gallic War\nPY  - 50 BC\nER  - \n" +
		"TY  - BOOK\nTI  - Astronomical\nPY  - -0043/03/15\nER  - \n" +
		"TY  - BOOK\nTI  - Old\nDA  - 4000 BC\nER  - \n"
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 8)
	require.Equal(t, 2020, recs[0].Paper.Year)
	require.Equal(t, 2019, recs[1].Paper.Year)
	require.Empty(t, recs[2].Problem)
	require.Zero(t, recs[2].Paper.Year)
	require.Equal(t, 14, recs[3].Line)
	require.Empty(t, recs[3].Problem)
	require.Equal(t, []string{`year "abc" is not a year; imported without a year`}, recs[3].Warnings)
	require.Empty(t, recs[4].Problem)
	require.Equal(t, "10.1/x", recs[4].Paper.DOI)
	require.Equal(t, []string{`year "Year" is not a year; imported without a year`}, recs[4].Warnings)
	for _, r := range recs[5:] {
		require.Empty(t, r.Problem, r.Paper.Title)
		require.Zero(t, r.Paper.Year, r.Paper.Title)
		require.Len(t, r.Warnings, 1, r.Paper.Title)
	}
	// The value is kept and exported, so a re-import says the same.
	require.Contains(t, string(format().Write(t, recs[5:6])), "PY  - 50 BC\r\n")
	require.Equal(t, recs[5].Warnings, format().Read(t, format().Write(t, recs[5:6]))[0].Warnings)
}

// TestNamesKeepTheFilesSplit: the split "Last, First" gives is kept and
// written back as given (it was guessed again from "Louis M. Wong Kee
// Song", giving "Song, Louis M. Wong Kee"); a name without a comma is an
// organisation kept whole, as in Zotero.
func TestNamesKeepTheFilesSplit(t *testing.T) {
	t.Parallel()
	in := "TY  - JOUR\nTI  - Names\nAU  - Wong Kee Song, Louis M.\nAU  - El Khoury, Rita\nAU  - Van de Walle, Jan, Jr.\nAU  - National Nurses United\nAU  - Smith J.\nPY  - 2020\nER  - \n"
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 1)
	require.Equal(t, []biblio.Name{
		{Last: "Wong Kee Song", First: "Louis M."}, {Last: "El Khoury", First: "Rita"},
		{Last: "Van de Walle", First: "Jan", Suffix: "Jr."}, {Literal: "National Nurses United"}, {Last: "Smith", First: "J."},
	}, recs[0].Names)
	out := string(format().Write(t, recs))
	for _, l := range []string{"AU  - Wong Kee Song, Louis M.\r\n", "AU  - El Khoury, Rita\r\n", "AU  - Van de Walle, Jan, Jr.\r\n", "AU  - National Nurses United\r\n"} {
		require.Contains(t, out, l)
	}
	back := format().Read(t, []byte(out))
	require.Equal(t, recs[0].Names, back[0].Names)
}

// TestExtraFieldsRoundTrip: publisher, place, ISBN/ISSN, editors and the
// tags Quarry has no field for are kept in Extra and written back, so an
// export imports again without losing them.
func TestExtraFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	in := "TY  - CHAP\nTI  - A chapter\nAU  - Doe, Jane\nA2  - Editor, Ed\nA2  - Other, Olga\nT2  - The Book\nT3  - Lecture Notes\nPB  - Springer\nCY  - Cham\nSN  - 978-3-030-12345-6\nM3  - Chapter type\nAD  - Somewhere\nUR  - https://a.example/1\nUR  - https://b.example/2\nPY  - 2019\nER  - \n" +
		"TY  - EJOUR\nTI  - An article\nSN  - 1234-5678\nUR  - http://dx.doi.org/10.1000/xyz\nPY  - 2018\nER  - \n"
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 2)
	ex := biblio.ExtraFields(recs[0])
	require.Equal(t, "Springer", ex[biblio.ExtraPublisher])
	require.Equal(t, "Cham", ex[biblio.ExtraAddress])
	require.Equal(t, "978-3-030-12345-6", ex[biblio.ExtraISBN])
	require.Equal(t, "Editor, Ed and Other, Olga", ex[biblio.ExtraEditor])
	require.Equal(t, "Chapter type", ex["ris_M3"])
	require.Equal(t, "Lecture Notes", ex[biblio.ExtraSeries])
	require.Equal(t, "https://b.example/2", ex["ris_UR"])
	require.Equal(t, "1234-5678", biblio.ExtraFields(recs[1])[biblio.ExtraISSN])
	require.Equal(t, "10.1000/xyz", recs[1].Paper.DOI, "a DOI from a doi.org URL")
	back := format().Read(t, format().Write(t, recs))
	require.Len(t, back, 2)
	for i := range recs {
		require.JSONEq(t, string(recs[i].Extra), string(back[i].Extra))
		require.Equal(t, recs[i].Paper, back[i].Paper)
		require.Equal(t, recs[i].Type, back[i].Type)
	}
	require.Contains(t, string(format().Write(t, recs)), "TY  - EJOUR\r\n", "the file's own type code is written back")
}

// TestDateWinsOverY1: DA (the full date) wins over the deprecated Y1 even
// when Y1 comes first, as in Zotero's RIS translator.
func TestDateWinsOverY1(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte("TY  - JOUR\nTI  - Deprecated tag test\nY1  - 1900/01/01\nDA  - 1950/01/01\nER  - \n"))
	require.Equal(t, 1950, recs[0].Paper.Year)
}

// TestSingleSpaceTags: "TY - JOUR" (one space before the dash, as some
// exporters write) is RIS too.
func TestSingleSpaceTags(t *testing.T) {
	t.Parallel()
	in := "TY - JOUR\nTI - One space\nAU - Doe, Jane\nPY - 2001\nER - \n"
	require.Equal(t, biblio.RIS, biblio.Detect([]byte(in)))
	recs := format().Read(t, []byte(in))
	require.Equal(t, "One space", recs[0].Paper.Title)
	require.Equal(t, 2001, recs[0].Paper.Year)
}

// TestExtraAndNamesRoundTripAnyOrder: whatever tags a file holds, in any
// order, the names' split and every kept field survive write → read.
func TestExtraAndNamesRoundTripAnyOrder(t *testing.T) {
	t.Parallel()
	format().ExtraRoundTrip(t, []string{"TY  - JOUR\n", "TY  - CHAP\n", "TY  - CONF\n", "TY  - EJOUR\n", "ER  - \n", "TI  - t\n",
		"AU  - Doe, Jane\n", "AU  - Smith J.\n", "AU  - Org Name\n", "AU  - Plato\n", "A2  - Ed, Al\n", "ED  - Ed, Bo\n", "PB  - P\n",
		"CY  - C\n", "SN  - 1234-5678\n", "SN  - 978-3-16-148410-0\n", "SN  - weird\n", "M3  - m\n", "M1  - 7\n", "C3  - proc\n",
		"T2  - ven\n", "AN  - 123\n", "DB  - PubMed\n", "DB  - NLM\n", "UR  - http://a\n", "UR  - http://b; http://c\n", "AD  - x\n",
		"cont line\n", "ET  - 2\n", "LA  - en\n", "T3  - series\n", "PY  - Year\n", "DA  - 2001\n", "\n"}, 5000)
}

// TestReferenceManagerNotes: Reference Manager's "N1  - Volume ID: 12"
// lines give the fields RIS had no tag for (VL then held the edition), as
// Zotero reads them; the lines stay in the note.
func TestReferenceManagerNotes(t *testing.T) {
	t.Parallel()
	in := "TY  - CHAP\nT1  - Analytic Title\nT2  - The Book\nVL  - 2nd\nN1  - Volume ID: 12\nN1  - Issue ID: 3\nN1  - Page(s): 5-9\nPY  - 1999\nER  - \n" +
		"TY  - CONF\nT1  - A paper\nT2  - Series\nN1  - Proceedings Title: Proc. of X\nPY  - 1999\nER  - \n"
	recs := format().Read(t, []byte(in))
	require.Equal(t, "12", recs[0].Paper.Volume)
	require.Equal(t, "3", recs[0].Paper.Issue)
	require.Equal(t, "5-9", recs[0].Paper.Pages)
	require.Equal(t, "2nd", biblio.ExtraFields(recs[0])[biblio.ExtraEdition])
	require.Contains(t, recs[0].Note, "Volume ID: 12")
	require.Equal(t, "Proc. of X", recs[1].Paper.Venue)
	back := format().Read(t, format().Write(t, recs))
	for i := range recs {
		require.Equal(t, recs[i].Paper, back[i].Paper)
		require.Equal(t, biblio.ExtraFields(recs[i]), biblio.ExtraFields(back[i]))
	}
}
