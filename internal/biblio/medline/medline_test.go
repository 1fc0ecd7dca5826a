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
	type want struct {
		line                              int
		typ, title, venue, pages, volume  string
		issue, doi, pmid, abs, mark, note string
		year                              int
		authors, keywords                 []string
		problem                           string
	}
	tests := []struct {
		file string
		want []want
	}{
		{"pubmed.nbib", []want{
			{line: 1, typ: biblio.Article, pmid: "32015507", year: 2020, volume: "579", issue: "7798", pages: "270-273",
				title: "A pneumonia outbreak associated with a new coronavirus of probable bat origin.",
				venue: "Nature", doi: "10.1038/s41586-020-2012-7",
				abs:     "Since the outbreak of severe acute respiratory syndrome (SARS) 18 years ago, a large number of SARS-related coronaviruses (SARSr-CoVs) have been discovered in their natural reservoir host, bats.",
				authors: []string{"Peng Zhou", "Xing-Lou Yang", "Zheng-Li Shi"}, keywords: []string{"Animals", "Betacoronavirus", "Chiroptera", "zoonosis"}},
			{line: 47, typ: biblio.Article, pmid: "33782057", year: 2021, volume: "372", pages: "n71",
				title: "The PRISMA 2020 statement: an updated guideline for reporting systematic reviews.",
				venue: "BMJ (Clinical research ed.)", doi: "10.1136/bmj.n71", note: "Erratum in: BMJ. 2021 Apr 7;373:n906.",
				authors: []string{"Matthew J Page", "Joanne E McKenzie", "PRISMA 2020 Working Group"}},
			{line: 69, typ: biblio.Article, pmid: "30000001", year: 2019, volume: "26", issue: "2", pages: "101-7",
				title: "Évaluation des réseaux de neurones chez l'enfant: étude multicentrique.", venue: "Arch Pediatr",
				authors:  []string{"Jürgen Müller", "Åse K Øverland", "José Ángel Gómez-Peña"},
				keywords: []string{"Child", "Humans", "Neural Networks, Computer"}},
			{line: 90, typ: biblio.Preprint, pmid: "38000002", year: 2023, title: "Large language models for screening in systematic reviews.",
				venue: "medRxiv : the preprint server for health sciences", doi: "10.1101/2023.11.20.23298765",
				abs:     "BACKGROUND: Screening is slow. METHODS: We used GPT-4. RESULTS: Recall was 0.95.",
				authors: []string{"Kim Lee"}},
		}},
		{"latin1_crlf.txt", []want{
			{line: 2, typ: biblio.Book, pmid: "11111111", year: 1999, title: "Hand-edited record in Latin-1: résumé of études.",
				authors: []string{"René François"}, mark: biblio.Relevant, note: "keep"},
			{line: 9, problem: "record does not start with a MEDLINE tag"},
			{line: 12, typ: biblio.Conference, pmid: "22222222", title: "Only short author names and no year.",
				authors: []string{"JA Smith", "A van der Berg"}},
			{line: 17, problem: "missing title"},
			{line: 20, pmid: "44444444", title: "Last record, no trailing newline", authors: []string{"World Health Organization"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got := format().ReadFile(t, tt.file)
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				g, p := got[i], got[i].Paper
				require.Equal(t, w.line, g.Line, "record %d", i)
				require.Equal(t, w.problem, g.Problem, "record %d", i)
				if w.problem != "" {
					continue
				}
				require.Equal(t, w.typ, g.Type, "record %d", i)
				require.Equal(t, w.title, p.Title, "record %d", i)
				require.Equal(t, w.venue, p.Venue, "record %d", i)
				require.Equal(t, w.pages, p.Pages, "record %d", i)
				require.Equal(t, w.volume, p.Volume, "record %d", i)
				require.Equal(t, w.issue, p.Issue, "record %d", i)
				require.Equal(t, w.year, p.Year, "record %d", i)
				require.Equal(t, w.authors, p.Authors, "record %d", i)
				require.Equal(t, w.doi, p.DOI, "record %d", i)
				require.Equal(t, w.pmid, p.PMID, "record %d", i)
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
// its line and value.
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte("PMID- 1\nTI  - Dated\nDP  - 2020 May 5\n\nPMID- 2\nTI  - Bad\nDP  - Spring\n"))
	require.Len(t, recs, 2)
	require.Equal(t, 2020, recs[0].Paper.Year)
	require.Equal(t, 5, recs[1].Line)
	require.Equal(t, `year "Spring" is not a year`, recs[1].Problem)
}
