package medline_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/medline"
	"quarry/internal/research"
)

// format is MEDLINE for the shared harness. The format wraps long values
// over lines, so an abstract, URL or note comes back with its whitespace
// collapsed; authors are written "Last, First, Suffix" (FAU).
func format() biblitest.Format {
	f := biblitest.New(medline.NewReader, medline.NewWriter)
	f.Carried = func(r biblio.Record) biblio.Record {
		c := biblio.Comparable(r)
		c.Paper.Abstract = strings.Join(strings.Fields(c.Paper.Abstract), " ")
		c.Paper.URL = strings.Join(strings.Fields(c.Paper.URL), " ")
		c.Note = strings.Join(strings.Fields(c.Note), " ")
		return c
	}
	f.LinePerRecord = true
	f.InvertsNames = true
	return f
}

// records is the shared corpus plus what only MEDLINE makes hard: a
// leading PMID, collective authors (CN), a title ending like a MEDLINE
// "[doi]" marker, a URL with a space, an abbreviated page range.
func records(t testing.TB) []biblio.Record {
	t.Helper()
	recs := []biblio.Record{
		{Type: biblio.Article, Paper: research.RawPaper{
			Title:   "Naïve Bayes in Zürich",
			Authors: []string{"Matthew J. Page", "Martin Luther King Jr.", "PRISMA 2020 Working Group"},
			Year:    2021, Volume: "372", PMID: "33782057", DOI: "10.1136/bmj.n71",
		}, Mark: biblio.Relevant, Note: "core guideline; cite in methods\nsecond line"},
		{Type: biblio.Report, Paper: research.RawPaper{Title: "A technical report with [brackets] in its title [doi]"}},
		{Paper: research.RawPaper{Title: "A URL with a space", URL: "https://example.org/a b"}},
		{Type: biblio.Chapter, Paper: research.RawPaper{Title: "Abbreviated page range", Venue: "Introduction to Information Retrieval", Pages: "151-75"}},
		{Type: biblio.Thesis, Paper: research.RawPaper{Title: "A thesis without a year", Authors: []string{"Lucía García-Márquez"}}},
	}
	for i := range recs {
		biblio.Finish(&recs[i])
		require.Empty(t, recs[i].Problem, recs[i].Paper.Title)
	}
	return append(recs, biblitest.Corpus(t)...)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	_, out := format().RoundTrip(t, records(t))
	s := string(out)
	require.True(t, strings.HasPrefix(s, "PMID- 33782057\nVI  - 372\n"))
	require.Contains(t, s, "CN  - PRISMA 2020 Working Group\n")
	require.Contains(t, s, "FAU - King, Martin Luther, Jr.\nAU  - King ML Jr.\n")
	require.Contains(t, s, "GN  - Quarry mark: relevant; core guideline; cite in methods second line\n")
	require.Contains(t, s, "AID - 2001.08361v2 [arxiv]\n")
	require.NotContains(t, s, "\r")
	for _, l := range strings.Split(s, "\n") {
		require.LessOrEqual(t, len(l), 82, l)
	}
}

func TestSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []biblitest.Want
	}{
		{"pubmed.nbib", []biblitest.Want{
			{Line: 1, Type: biblio.Article, PMID: "32015507", Year: 2020, Volume: "579", Issue: "7798", Pages: "270-273",
				Title: "A pneumonia outbreak associated with a new coronavirus of probable bat origin.",
				Venue: "Nature", DOI: "10.1038/s41586-020-2012-7",
				Abstract: "Since the outbreak of severe acute respiratory syndrome (SARS) 18 years ago, a large number of SARS-related coronaviruses (SARSr-CoVs) have been discovered in their natural reservoir host, bats.",
				Authors:  []string{"Peng Zhou", "Xing-Lou Yang", "Zheng-Li Shi"}, Keywords: []string{"Animals", "Betacoronavirus", "Chiroptera", "zoonosis"}},
			{Line: 47, Type: biblio.Article, PMID: "33782057", Year: 2021, Volume: "372", Pages: "n71",
				Title: "The PRISMA 2020 statement: an updated guideline for reporting systematic reviews.",
				Venue: "BMJ (Clinical research ed.)", DOI: "10.1136/bmj.n71", Note: "Erratum in: BMJ. 2021 Apr 7;373:n906.",
				Authors: []string{"Matthew J Page", "Joanne E McKenzie", "PRISMA 2020 Working Group"}},
			{Line: 69, Type: biblio.Article, PMID: "30000001", Year: 2019, Volume: "26", Issue: "2", Pages: "101-7",
				Title: "Évaluation des réseaux de neurones chez l'enfant: étude multicentrique.", Venue: "Arch Pediatr",
				Authors:  []string{"Jürgen Müller", "Åse K Øverland", "José Ángel Gómez-Peña"},
				Keywords: []string{"Child", "Humans", "Neural Networks, Computer"}},
			{Line: 90, Type: biblio.Preprint, PMID: "38000002", Year: 2023, Title: "Large language models for screening in systematic reviews.",
				Venue: "medRxiv : the preprint server for health sciences", DOI: "10.1101/2023.11.20.23298765",
				Abstract: "BACKGROUND: Screening is slow. METHODS: We used GPT-4. RESULTS: Recall was 0.95.",
				Authors:  []string{"Kim Lee"}},
		}},
		{"latin1_crlf.txt", []biblitest.Want{
			{Line: 2, Type: biblio.Book, PMID: "11111111", Year: 1999, Title: "Hand-edited record in Latin-1: résumé of études.",
				Authors: []string{"René François"}, Mark: biblio.Relevant, Note: "keep"},
			{Line: 9, Problem: "record does not start with a MEDLINE tag"},
			{Line: 12, Type: biblio.Conference, PMID: "22222222", Title: "Only short author names and no year.",
				Authors: []string{"JA Smith", "A van der Berg"}},
			{Line: 17, Problem: "missing title"},
			{Line: 20, PMID: "44444444", Title: "Last record, no trailing newline", Authors: []string{"World Health Organization"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			biblitest.CheckSamples(t, tt.want, format().ReadFile(t, tt.file))
		})
	}
}

func TestReaderIOError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	r := medline.NewReader(io.MultiReader(strings.NewReader("PMID- 1\nTI  - A\n"), iotest.ErrReader(boom)))
	_, err := r.Next()
	require.ErrorIs(t, err, boom)
}

func TestDetectedAsMEDLINE(t *testing.T) {
	t.Parallel()
	out := format().Write(t, records(t)[:1])
	require.Equal(t, biblio.MEDLINE, biblio.Detect(out))
}

// TestReaderReportsAYearThatIsNotOne: a DP without a year is reported with
// its line and value as a warning; the record imports without a year.
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte("PMID- 1\nTI  - Dated\nDP  - 2020 May 5\n\nPMID- 2\nTI  - Bad\nDP  - Spring\n"))
	require.Len(t, recs, 2)
	require.Equal(t, 2020, recs[0].Paper.Year)
	require.Equal(t, 5, recs[1].Line)
	require.Empty(t, recs[1].Problem)
	require.Equal(t, "Bad", recs[1].Paper.Title)
	require.Equal(t, []string{`year "Spring" is not a year; imported without a year`}, recs[1].Warnings)
}

// TestNamesKeepTheFilesSplit: FAU gives the split ("Wong Kee Song, Louis
// M." is Wong Kee Song, not Song), CN is a group kept whole, and both are
// written back as read.
func TestNamesKeepTheFilesSplit(t *testing.T) {
	t.Parallel()
	in := "PMID- 1\nTI  - Names\nFAU - Wong Kee Song, Louis M.\nAU  - Wong Kee Song LM\nFAU - El Khoury, Rita\nAU  - El Khoury R\nCN  - National Nurses United\nDP  - 2020\n"
	recs := format().Read(t, []byte(in))
	require.Equal(t, []biblio.Name{{Last: "Wong Kee Song", First: "Louis M."}, {Last: "El Khoury", First: "Rita"}, {Literal: "National Nurses United"}}, recs[0].Names)
	out := string(format().Write(t, recs))
	require.Contains(t, out, "FAU - Wong Kee Song, Louis M.\nAU  - Wong Kee Song LM\n")
	require.Contains(t, out, "CN  - National Nurses United\n")
	require.Equal(t, recs[0].Names, format().Read(t, []byte(out))[0].Names)
	// Without FAU, AU gives the split of the short form.
	recs = format().Read(t, []byte("PMID- 2\nTI  - Short\nAU  - Van de Walle J\nDP  - 2020\n"))
	require.Equal(t, []biblio.Name{{Last: "Van de Walle", First: "J"}}, recs[0].Names)
}

// TestPMCBeforePMID: PMC's MEDLARS export writes "PMC - " before "PMID- ";
// the PMID is the same record's, not the start of a new one (it gave a
// false "missing title" skip).
func TestPMCBeforePMID(t *testing.T) {
	t.Parallel()
	in := "PMC - PMC6055010\nPMID- 30042925\nTI  - A method package\nDP  - 2018\n\nPMC - PMC1\nPMID- 2\nTI  - Second\nDP  - 2019\nPMID- 3\nTI  - Third, no blank line before\nDP  - 2019\n"
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 3)
	for _, r := range recs {
		require.Empty(t, r.Problem)
	}
	require.Equal(t, "30042925", recs[0].Paper.PMID)
	require.Equal(t, "3", recs[2].Paper.PMID)
}

// TestBookChapterVenue: a chapter's BTI (the book's title) is its venue;
// a book's BTI is its title. Publisher, place, ISBN and editors are kept
// in Extra and written back.
func TestBookChapterVenue(t *testing.T) {
	t.Parallel()
	in := "PMID- 1\nTI  - A chapter\nBTI - The Book\nPB  - StatPearls Publishing\nPL  - Treasure Island (FL)\nISBN- 978-0-00-000000-2\nFED - Doe, Jane\nED  - Doe J\nDP  - 2020\nPT  - Book Chapter\n\nPMID- 2\nBTI - Whole Book\nDP  - 2021\nPT  - Book\n"
	recs := format().Read(t, []byte(in))
	require.Equal(t, "The Book", recs[0].Paper.Venue)
	require.Equal(t, "Whole Book", recs[1].Paper.Title)
	ex := biblio.ExtraFields(recs[0])
	require.Equal(t, "StatPearls Publishing", ex[biblio.ExtraPublisher])
	require.Equal(t, "Treasure Island (FL)", ex[biblio.ExtraAddress])
	require.Equal(t, "978-0-00-000000-2", ex[biblio.ExtraISBN])
	require.Equal(t, "Doe, Jane", ex[biblio.ExtraEditor])
	back := format().Read(t, format().Write(t, recs[:1]))
	require.Equal(t, ex, biblio.ExtraFields(back[0]))
}

// TestPagesAndIdentifiers: PubMed's abbreviated end page is kept as the
// file gives it ("475-82", which the shared corpus round-trips), an electronic article's LID [pii] is its page when
// PG is missing, and a doi.org URL in AID (ERIC) is the DOI.
func TestPagesAndIdentifiers(t *testing.T) {
	t.Parallel()
	in := "PMID- 1\nTI  - A\nPG  - 475-82\nDP  - 2015\n\nPMID- 2\nTI  - B\nLID - 1042 [pii]\nDP  - 2021\n\nOWN - ERIC\nTI  - C\nAID - http://dx.doi.org/10.1186/s40468-019-0086-7\nDP  - 2019\n"
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 3)
	require.Equal(t, "475-82", recs[0].Paper.Pages)
	require.Equal(t, "1042", recs[1].Paper.Pages)
	require.Equal(t, "10.1186/s40468-019-0086-7", recs[2].Paper.DOI)
}

// TestExtraAndNamesRoundTripAnyOrder: whatever tags a file holds, in any
// order, the names' split and every kept field survive write → read.
func TestExtraAndNamesRoundTripAnyOrder(t *testing.T) {
	t.Parallel()
	format().ExtraRoundTrip(t, []string{"PMID- 1\n", "PMC - PMC1\n", "TI  - t\n", "BTI - b\n", "JT  - j\n", "FAU - Doe, Jane\n",
		"AU  - Doe J\n", "AU  - Roe R\n", "CN  - Group X\n", "FED - Ed, Al\n", "ED  - Ed A\n", "IS  - 1234-5678 (Print)\n",
		"ISBN- 978\n", "PB  - P\n", "PL  - L\n", "LA  - eng\n", "EN  - 2nd\n", "LID - 1042 [pii]\n", "DP  - 2020\n", "\n",
		"      cont\n", "PT  - Book Chapter\n"}, 5000)
}
