package csljson_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/bibtex"
	"quarry/internal/biblio/csljson"
	"quarry/internal/research"
)

// format is CSL-JSON for the shared harness. Several items may share a
// line. Keywords with commas come back whole (issue 22, item 9: they came
// back split at the commas).
func format() biblitest.Format {
	return biblitest.New(csljson.NewReader, csljson.NewWriter)
}

func TestReaderZoteroExport(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "zotero.json")
	require.Len(t, recs, 8)

	first := recs[0]
	require.NotEmpty(t, first.Extra, "what the record has no field for is kept")
	first.Extra = nil
	require.Equal(t, biblio.Record{
		Line: 2,
		Paper: research.RawPaper{
			ID:       "doi:10.48550/arxiv.1706.03762",
			Title:    "Attention Is All You Need",
			Authors:  []string{"Ashish Vaswani", "Noam Shazeer"},
			Year:     2017,
			Abstract: "The dominant sequence transduction models are based on complex recurrent or convolutional neural networks.",
			DOI:      "10.48550/arXiv.1706.03762",
			ArxivID:  "1706.03762",
			URL:      "http://arxiv.org/abs/1706.03762",
		},
		Type:  biblio.Preprint,
		Note:  "arXiv:1706.03762 [cs]",
		Names: []biblio.Name{{Last: "Vaswani", First: "Ashish"}, {Last: "Shazeer", First: "Noam"}},
	}, first)

	chapter := recs[1]
	require.Equal(t, biblio.Chapter, chapter.Type)
	require.Equal(t, "Handbook of Health Research Methods", chapter.Paper.Venue)
	require.Equal(t, 2005, chapter.Paper.Year, "date-parts with only a year")
	require.Equal(t, []string{"Björk Guðmundsdóttir"}, chapter.Paper.Authors, "editors are not authors")
	require.Equal(t, "233-250", chapter.Paper.Pages)

	report := recs[2]
	require.Equal(t, biblio.Report, report.Type)
	require.Equal(t, []string{"World Health Organization"}, report.Paper.Authors, "literal name")
	require.Equal(t, 2020, report.Paper.Year, "raw date")

	article := recs[3]
	require.Equal(t, biblio.Article, article.Type)
	require.Equal(t, research.RawPaper{
		ID: "doi:10.1186/s13054-018-1999-1", Title: "Sepsis bundles in the ICU: a cohort study",
		Authors: []string{"Ludwig van Beethoven", "Martin Luther King Jr."}, Year: 2018, Venue: "Critical Care",
		Volume: "22", Issue: "1", Pages: "e12", DOI: "10.1186/s13054-018-1999-1", PMID: "29999999",
	}, article.Paper)
	require.Equal(t, []string{"sepsis", "intensive care", "cohort"}, article.Keywords)
	require.Equal(t, biblio.Relevant, article.Mark)
	require.Equal(t, "primary outcome matches; check follow-up", article.Note)

	require.Equal(t, biblio.Conference, recs[4].Type)
	require.Equal(t, "Costs & benefits of 100% recall", recs[4].Paper.Title)
	require.Equal(t, 2019, recs[4].Paper.Year, "literal date")
	require.Equal(t, biblio.Thesis, recs[5].Type)
	require.Zero(t, recs[5].Paper.Year)

	require.Contains(t, recs[6].Problem, `"author"`)
	require.Equal(t, 149, recs[6].Line)
	require.Equal(t, "missing title", recs[7].Problem)
	require.Equal(t, biblio.Misc, recs[7].Type, "an unknown CSL type is misc")
	lines := []int{}
	for _, r := range recs {
		lines = append(lines, r.Line)
	}
	require.IsIncreasing(t, lines)
}

func TestReaderOddInputs(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "single_object_bom_crlf.json")
	require.Len(t, recs, 1)
	require.Equal(t, 2, recs[0].Line, "the BOM's line and the blank line count")
	require.Equal(t, biblio.Book, recs[0].Type)
	require.Equal(t, "A lone item in caf\uFFFD", recs[0].Paper.Title, "invalid UTF-8 is replaced")
	require.Equal(t, "3", recs[0].Paper.Volume, "a numeric volume")
	require.Equal(t, 1968, recs[0].Paper.Year)

	recs = format().ReadFile(t, "broken_syntax.json")
	require.Len(t, recs, 3)
	require.Equal(t, "First, fine", recs[0].Paper.Title)
	require.Equal(t, 3, recs[1].Line)
	require.Equal(t, 2001, recs[1].Paper.Year)
	require.Equal(t, 4, recs[2].Line)
	require.Contains(t, recs[2].Problem, "the rest of the file cannot be read")

	recs = format().ReadFile(t, "truncated.json")
	require.Len(t, recs, 2)
	require.Equal(t, "Truncated file", recs[0].Paper.Title)
	require.Equal(t, 3, recs[1].Line)
	require.Contains(t, recs[1].Problem, "ends in the middle")

	tests := []struct {
		name, in    string
		wantTitles  []string
		wantProblem string
	}{
		{"Empty", "", nil, ""},
		{"WhiteSpace", " \n\t\n", nil, ""},
		{"EmptyArray", "[]", nil, ""},
		{"NotJSON", "TY  - JOUR\n", []string{""}, "not CSL-JSON"},
		{"ItemNotObject", `[1, {"title":"ok"}]`, []string{"", "ok"}, "a JSON number, not an object"},
		{"MissingBracket", `[{"title":"ok"}`, []string{"ok", ""}, "ends in the middle"},
		{"ConcatenatedObjects", `{"title":"a"} {"title":"b"}`, []string{"a", "b"}, ""},
		{"TitleWrongType", `[{"title":["x"]}]`, []string{""}, `"title"`},
		{"DatePartsStrings", `[{"title":"x","issued":{"date-parts":[["1999"]]}}]`, []string{"x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recs := biblitest.ReadAll(t, csljson.NewReader(strings.NewReader(tt.in)))
			var titles []string
			problem := ""
			for _, r := range recs {
				titles = append(titles, r.Paper.Title)
				if r.Problem != "" {
					problem = r.Problem
				}
			}
			require.Equal(t, tt.wantTitles, titles)
			if tt.wantProblem == "" {
				require.Empty(t, problem)
			} else {
				require.Contains(t, problem, tt.wantProblem)
			}
		})
	}
}

func TestReaderReportsReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	r := csljson.NewReader(io.MultiReader(strings.NewReader(`[{"title":"ok"}, {"title":`), iotest.ErrReader(boom)))
	rec, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, "ok", rec.Paper.Title)
	_, err = r.Next()
	require.ErrorIs(t, err, boom)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	back, out := format().RoundTrip(t, biblitest.Corpus(t))
	require.True(t, strings.HasPrefix(string(out), "[\n{\"id\":"), "one item per line")
	for i, r := range back {
		require.Equal(t, i+2, r.Line)
	}
	require.Equal(t, "[]\n", string(format().Write(t, nil)), "an empty export is still a valid array")
}

// FuzzReader checks the reader's promises on any input and that what was
// read survives write → read unchanged (biblitest.Format.FuzzRoundTrip).
// The extra seed has names biblio.DisplayName once could not keep stable.
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/*.json")
	f.Add([]byte(`[{"title":"t","author":[{"literal":"A, B, C, D"},{"family":"0","suffix":"Sr"}]}]`))
	f.Fuzz(format().FuzzRoundTrip)
}

// TestReaderReportsAYearThatIsNotOne: an item whose issued date holds no
// year (or a year before the common era) imports without one and with a
// warning quoting the value; a literal "n.d." is an unknown year without
// one (issue 22, item 7: such items were dropped with a Problem).
func TestReaderReportsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte(`[
{"type":"article-journal","title":"Parts","issued":{"date-parts":[["2020",5]]}},
{"type":"article-journal","title":"Raw","issued":{"raw":"May 2019"}},
{"type":"article-journal","title":"Undated","issued":{"literal":"n.d."}},
{"type":"article-journal","title":"Bad parts","issued":{"date-parts":[["abc"]]}},
{"type":"article-journal","title":"Bad raw","issued":{"raw":"someday"}},
{"type":"article-journal","title":"Huge","issued":{"date-parts":[[10000000]]}},
{"type":"article-journal","title":"Caesar","issued":{"date-parts":[[-44, 3, 15]]}}
]`))
	require.Len(t, recs, 7)
	require.Equal(t, 2020, recs[0].Paper.Year)
	require.Equal(t, 2019, recs[1].Paper.Year)
	require.Empty(t, recs[2].Problem)
	require.Zero(t, recs[2].Paper.Year)
	require.Empty(t, recs[2].Warnings)
	require.Equal(t, 5, recs[3].Line)
	for i, want := range map[int]string{3: `year "abc" is not a year`, 4: `year "someday" is not a year`, 5: `year "10000000" is not a year`, 6: `year "-44" is not a year`} {
		require.Empty(t, recs[i].Problem, "the record imports")
		require.Zero(t, recs[i].Paper.Year)
		require.Equal(t, []string{want}, recs[i].Warnings)
	}
}

// TestReaderSkipsAnItemOverTheRecordLimit: an item longer than
// Limits.MaxRecord is one Problem record at its line naming the limit, and
// the items after it still read; brackets and quotes inside its strings
// do not confuse where it ends. Before, it ended the file.
func TestReaderSkipsAnItemOverTheRecordLimit(t *testing.T) {
	t.Parallel()
	long := strings.Repeat(`x]}\"{[`, 300) // 2,100 bytes of a string
	in := "[\n" +
		`{"title":"ok one","issued":{"date-parts":[[2020]]}},` + "\n" +
		`{"title":"too long","abstract":"` + long + `","author":[{"family":"A"}]},` + "\n" +
		`{"title":"ok two","issued":{"date-parts":[[2021]]}},` + "\n" +
		`{"title":"` + long + `"}` + "\n" +
		"]\n"
	r := csljson.NewReader(strings.NewReader(in)).WithLimits(biblio.Limits{MaxRecord: 1 << 10})
	recs := biblitest.ReadAll(t, r)
	require.Len(t, recs, 4)
	require.Equal(t, [2]any{2, "ok one"}, [2]any{recs[0].Line, recs[0].Paper.Title})
	require.Equal(t, [2]any{3, biblio.RecordTooLong(1 << 10)}, [2]any{recs[1].Line, recs[1].Problem})
	require.Contains(t, recs[1].Problem, "1 KiB (the record limit)")
	require.Equal(t, [2]any{4, "ok two"}, [2]any{recs[2].Line, recs[2].Paper.Title})
	require.Equal(t, [2]any{5, biblio.RecordTooLong(1 << 10)}, [2]any{recs[3].Line, recs[3].Problem}, "the last item, and the closing bracket after it")
}

// TestReaderSkipsAnItemWithAFieldOverTheLineLimit: a string longer than
// Limits.MaxLine, the field limit biblio.Limits promises for CSL-JSON
// strings, makes its item a Problem record naming that limit, whether it
// fits one read or spans many, and the next item still reads; a string
// of exactly the limit is kept. Before, only the record limit applied.
func TestReaderSkipsAnItemWithAFieldOverTheLineLimit(t *testing.T) {
	t.Parallel()
	for _, max := range []int{100, biblio.DefaultMaxLine} {
		in := "[\n" +
			`{"title":"` + strings.Repeat("a", max) + `"},` + "\n" +
			`{"title":"long","abstract":"` + strings.Repeat(`\"`, max/2) + `b"},` + "\n" +
			`{"title":"ok"}` + "\n]"
		recs := biblitest.ReadAll(t, csljson.NewReader(strings.NewReader(in)).WithLimits(biblio.Limits{MaxLine: max, MaxRecord: 4 * max}))
		require.Len(t, recs, 3)
		require.Empty(t, recs[0].Problem, "a string of exactly the limit")
		require.Equal(t, 3, recs[1].Line)
		require.Contains(t, recs[1].Problem, "(the field limit)")
		require.Contains(t, recs[1].Problem, biblio.Size(int64(max)))
		require.Equal(t, "ok", recs[2].Paper.Title)
	}
}

// TestNamesKeepTheirSplit: CSL's family/given/suffix/particles/literal
// become Record.Names and the writer writes them back, not a guess from
// the display form (issue 22, item 1).
func TestNamesKeepTheirSplit(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte(`[{"type":"article-journal","title":"T","author":[
{"family":"Wong Kee Song","given":"Louis M."},
{"family":"Walle","non-dropping-particle":"Van de","given":"Rik"},
{"family":"King","given":"Martin Luther","suffix":"Jr."},
{"literal":"National Nurses United"}]}]`))
	require.Len(t, recs, 1)
	want := []biblio.Name{
		{Last: "Wong Kee Song", First: "Louis M."},
		{Last: "Van de Walle", First: "Rik"},
		{Last: "King", First: "Martin Luther", Suffix: "Jr."},
		{Literal: "National Nurses United"},
	}
	require.Equal(t, want, recs[0].Names)
	var b strings.Builder
	w := csljson.NewWriter(&b)
	require.NoError(t, w.Write(recs[0]))
	require.NoError(t, w.Close())
	require.Contains(t, b.String(), `{"family":"Wong Kee Song","given":"Louis M."}`)
	require.Contains(t, b.String(), `{"literal":"National Nurses United"}`)
	back := format().Read(t, []byte(b.String()))
	require.Equal(t, want, back[0].Names)
}

// TestRichTextTitles: CSL's HTML-like markup in titles becomes text, sub-
// and superscripts Unicode (issue 22, item 9).
func TestRichTextTitles(t *testing.T) {
	t.Parallel()
	recs := format().Read(t, []byte(`[{"title":"Growth of Cu<sub>2</sub>O on <i>Si</i>(001) at 10<sup>-3</sup> Pa &amp; <span class=\"nocase\">pH</span> <b>7</b>","container-title":"<i>Nature</i>"}]`))
	require.Len(t, recs, 1)
	require.Equal(t, "Growth of Cu₂O on Si(001) at 10⁻³ Pa & pH 7", recs[0].Paper.Title)
	require.Equal(t, "Nature", recs[0].Paper.Venue)
}

// TestExtraRoundTrip: publisher, ISBN, editor, place and the other
// variables a record has no field for are kept in Extra and written back,
// whether they came from CSL-JSON or (under BibTeX's names) from BibTeX
// (issue 22, item 6).
func TestExtraRoundTrip(t *testing.T) {
	t.Parallel()
	magazine := format().Read(t, []byte(`[{"type":"article-magazine","title":"M"}]`))
	require.JSONEq(t, `{"csl_type":"article-magazine"}`, string(magazine[0].Extra), "a type the writer would not give back is kept")
	in := `[{"id":"x","type":"book","title":"A book","publisher":"Springer","publisher-place":"Heidelberg","ISBN":"978-3-642-32156-6","collection-title":"Lecture notes","edition":"2","language":"en","editor":[{"family":"Roe","given":"Richard"}],"number-of-pages":"206","accessed":{"date-parts":[[2020,1,2]]},"translator":[{"family":"Doe","given":"Jane"}]}]`
	recs := format().Read(t, []byte(in))
	require.Len(t, recs, 1)
	// The publisher is the book's venue; the type is the one the writer
	// writes for a book: neither is repeated in Extra.
	require.Equal(t, "Springer", recs[0].Paper.Venue)
	require.JSONEq(t, `{"address":"Heidelberg","isbn":"978-3-642-32156-6","series":"Lecture notes","edition":"2","language":"en","editor":"Roe, Richard","number-of-pages":"206","accessed":{"date-parts":[[2020,1,2]]},"translator":[{"family":"Doe","given":"Jane"}]}`, string(recs[0].Extra))
	var b strings.Builder
	w := csljson.NewWriter(&b)
	require.NoError(t, w.Write(recs[0]))
	require.NoError(t, w.Close())
	back := format().Read(t, []byte(b.String()))
	require.JSONEq(t, string(recs[0].Extra), string(back[0].Extra))

	// From BibTeX: its field names, the editor as text.
	rec := biblio.Record{Type: biblio.Chapter, Paper: research.RawPaper{Title: "Ch", Venue: "Book"},
		Extra: []byte(`{"bibtex_type":"incollection","bibtex_key":"k1","publisher":"Kumarian Press","address":"Bloomfield","isbn":"1","editor":"Roe, Richard and Müller, Jörg","file":"a.pdf"}`)}
	biblio.Finish(&rec)
	b.Reset()
	w = csljson.NewWriter(&b)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	out := b.String()
	require.Contains(t, out, `"citation-key":"k1"`)
	require.Contains(t, out, `"editor":[{"family":"Roe","given":"Richard"},{"family":"Müller","given":"Jörg"}]`)
	require.Contains(t, out, `"publisher":"Kumarian Press","publisher-place":"Bloomfield"`)
	require.NotContains(t, out, "a.pdf", "BibTeX's file has no CSL variable")
}

// TestKeywordsWithCommasRoundTrip: a keyword holding a comma comes back
// whole (issue 22, item 9: "Databases, Protein" came back as two).
func TestKeywordsWithCommasRoundTrip(t *testing.T) {
	t.Parallel()
	for _, kws := range [][]string{{"Databases, Protein", "Humans"}, {"Databases, Protein"}, {"a; b", "c, d"}, {"x", "y"}} {
		rec := biblio.Record{Paper: research.RawPaper{Title: "T"}, Keywords: kws}
		biblio.Finish(&rec)
		var b strings.Builder
		w := csljson.NewWriter(&b)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		back := format().Read(t, []byte(b.String()))
		require.Equal(t, kws, back[0].Keywords, b.String())
	}
}

// TestBibTeXThroughCSLJSON: a BibTeX record exported as CSL-JSON and back
// to BibTeX keeps its split names, publisher, place, ISBN, editor and
// citation key (issue 22, item 6).
func TestBibTeXThroughCSLJSON(t *testing.T) {
	t.Parallel()
	in := `@book{doe2020, title={A Book}, author={Wong Kee Song, Louis M. and {National Nurses United}}, year={2020},
  publisher={Kumarian Press}, address={Bloomfield, CT}, isbn={978-3-16-148410-0}, editor={Roe, Richard}, edition={2}, series={Studies}}
`
	recs := biblitest.ReadAll(t, bibtex.NewReader(strings.NewReader(in)))
	require.Len(t, recs, 1)
	var c strings.Builder
	w := csljson.NewWriter(&c)
	require.NoError(t, w.Write(recs[0]))
	require.NoError(t, w.Close())
	mid := format().Read(t, []byte(c.String()))
	require.Len(t, mid, 1)
	require.Equal(t, recs[0].Names, mid[0].Names)
	var b strings.Builder
	bw := bibtex.NewWriter(&b)
	require.NoError(t, bw.Write(mid[0]))
	require.NoError(t, bw.Close())
	back := biblitest.ReadAll(t, bibtex.NewReader(strings.NewReader(b.String())))
	require.Len(t, back, 1)
	require.Equal(t, biblio.Comparable(recs[0]), biblio.Comparable(back[0]))
	require.Equal(t, recs[0].Names, back[0].Names)
	var want, got map[string]any
	require.NoError(t, json.Unmarshal(recs[0].Extra, &want))
	require.NoError(t, json.Unmarshal(back[0].Extra, &got))
	for _, k := range []string{"address", "isbn", "editor", "edition", "series", "bibtex_key"} {
		require.Equal(t, want[k], got[k], k)
	}
	require.Equal(t, "Kumarian Press", back[0].Paper.Venue)
}

// TestReimportAddsNothingToExtra: an export read back adds nothing to
// Extra (no csl_type, no publisher beside the venue), so re-importing a
// library's own export into it reads as unchanged.
func TestReimportAddsNothingToExtra(t *testing.T) {
	t.Parallel()
	recs := biblitest.Corpus(t)
	var b strings.Builder
	w := csljson.NewWriter(&b)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	back := format().Read(t, []byte(b.String()))
	require.Len(t, back, len(recs))
	for i, r := range back {
		require.Empty(t, string(r.Extra), "record %d (%s)", i, recs[i].Paper.Title)
	}
}
