package csvfile_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/csvfile"
	"quarry/internal/biblio/jsonl"
	"quarry/internal/engine"
	"quarry/internal/skills"
)

func readAll(t testing.TB, r biblio.Reader) []biblio.Record {
	t.Helper()
	var out []biblio.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, rec)
	}
}

func readFile(t *testing.T, name string) []biblio.Record {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	return readAll(t, csvfile.NewReader(f))
}

func writeAll(t testing.TB, recs []biblio.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csvfile.NewWriter(&buf)
	for _, rec := range recs {
		require.NoError(t, w.Write(rec))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func comparable(recs []biblio.Record) []biblio.Record {
	out := make([]biblio.Record, len(recs))
	for i, r := range recs {
		out[i] = biblio.Comparable(r)
	}
	return out
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
	recs := readFile(t, "scopus.csv")
	require.Len(t, recs, 4)
	require.Equal(t, biblio.Record{
		Line: 2,
		Paper: skills.RawPaper{
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
	recs := readFile(t, "wos.txt")
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
	recs := readFile(t, "excel_semicolon.csv")
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
	recs := readFile(t, "missing.csv")
	require.Len(t, recs, 6)
	require.Equal(t, []string{"Ana Müller", "Li Wei"}, recs[0].Paper.Authors, `split on " and "`)
	require.Equal(t, "missing title", recs[1].Problem)
	require.Equal(t, 3, recs[1].Line)
	require.Empty(t, recs[2].Problem, "a short row is read as far as it goes")
	require.Equal(t, "Short row", recs[2].Paper.Title)
	require.Zero(t, recs[3].Paper.Year)
	require.Equal(t, "year 9999 out of range", recs[4].Problem)
	require.Equal(t, []string{"Jane Doe"}, recs[5].Paper.Authors)
	require.Equal(t, 7, recs[5].Line)
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
			require.Equal(t, engine.EInvalid, engine.ErrorCode(err))
			require.Contains(t, err.Error(), tt.wantMsg)
			_, again := r.Next()
			require.Equal(t, err, again, "the file-level error sticks")
		})
	}
}

func TestReaderEmptyAndIOError(t *testing.T) {
	t.Parallel()
	require.Empty(t, readAll(t, csvfile.NewReader(strings.NewReader(""))))
	require.Empty(t, readAll(t, csvfile.NewReader(strings.NewReader("title,year\n"))))
	boom := errors.New("disk on fire")
	r := csvfile.NewReader(io.MultiReader(strings.NewReader("title\nok\n"), errReader{boom}))
	var err error
	for err == nil {
		_, err = r.Next()
	}
	require.ErrorIs(t, err, boom)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// corpus is the varied record set every format's round trip uses, kept
// once as Quarry JSON Lines.
func corpus(t testing.TB) []biblio.Record {
	t.Helper()
	f, err := os.Open("../jsonl/testdata/roundtrip.jsonl")
	require.NoError(t, err)
	defer f.Close()
	return readAll(t, jsonl.NewReader(f))
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	orig := corpus(t)
	require.NotEmpty(t, orig)
	orig = append(orig, biblio.Record{Paper: skills.RawPaper{Title: "Corporate author", Authors: []string{"Research and Development Corp."}}})
	biblio.Finish(&orig[len(orig)-1])
	out := writeAll(t, orig)
	require.True(t, strings.HasPrefix(string(out), "id,title,authors,year,venue,volume,issue,pages,abstract,doi,pmid,arxiv_id,url,keywords,type,mark,note\n"))
	back := readAll(t, csvfile.NewReader(bytes.NewReader(out)))
	require.Equal(t, comparable(orig), comparable(back))
	require.Equal(t, "id,title,authors,year,venue,volume,issue,pages,abstract,doi,pmid,arxiv_id,url,keywords,type,mark,note\n", string(writeAll(t, nil)))
}

func FuzzReader(f *testing.F) {
	files, err := filepath.Glob("testdata/*.*")
	require.NoError(f, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := csvfile.NewReader(bytes.NewReader(data))
		var recs []biblio.Record
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				require.Equal(t, engine.EInvalid, engine.ErrorCode(err), "only a column-mapping error")
				require.Empty(t, recs)
				return
			}
			recs = append(recs, rec)
		}
		var ok []biblio.Record
		last := 1
		for _, r := range recs {
			require.GreaterOrEqual(t, r.Line, last)
			last = r.Line
			if r.Problem == "" {
				require.NoError(t, r.Paper.Validate())
				if !commaInName(r) {
					ok = append(ok, r)
				}
			}
		}
		back := readAll(t, csvfile.NewReader(bytes.NewReader(writeAll(t, ok))))
		require.Equal(t, comparable(ok), comparable(back))
	})
}

// commaInName reports an author whose display form still has a comma:
// biblio.Finish turns "A, B, C, D" into "B A C, D", which is not a fixed
// point of biblio.DisplayName ("D B A C" next time), so no format can
// round-trip it; the fuzz target leaves such records out of that check.
func commaInName(r biblio.Record) bool {
	return slices.ContainsFunc(r.Paper.Authors, func(a string) bool { return strings.Contains(a, ",") })
}
