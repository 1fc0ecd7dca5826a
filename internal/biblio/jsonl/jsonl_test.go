package jsonl_test

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
	"quarry/internal/biblio/jsonl"
	"quarry/internal/research"
)

// format is JSON Lines for the shared harness: Quarry's own export, which
// carries every field; the reader skips rejected submissions on purpose.
func format() biblitest.Format {
	f := biblitest.New(jsonl.NewReader, jsonl.NewWriter)
	f.LinePerRecord = true
	f.Skips = true
	return f
}

func TestReaderMapsArxivListings(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "arxiv_sample.jsonl")
	require.Len(t, recs, 4, "the blank line is not a record")

	first := recs[0]
	require.Equal(t, 1, first.Line)
	require.Equal(t, research.RawPaper{
		ID:       "arxiv:2503.11731",
		Title:    "Industrial-Grade Sensor Simulation via Gaussian Splatting: A Modular Framework",
		Authors:  []string{"Xianming Zeng", "Sicong Du", "Qifeng Chen"},
		Year:     2025,
		Venue:    "arXiv",
		Abstract: "Sensor simulation is pivotal for scalable validation of autonomous driving systems. This paper introduces a Gaussian Splatting (GS) based system.",
		ArxivID:  "2503.11731",
		URL:      "https://arxiv.org/abs/2503.11731",
	}, first.Paper)
	var extra map[string]any
	require.NoError(t, json.Unmarshal(first.Extra, &extra))
	require.Equal(t, map[string]any{"categories": []any{"cs.CV", "cs.RO"}, "first_listed": "2025-03-18", "times_listed": float64(2)}, extra)

	require.Equal(t, 3, recs[2].Line)
	require.Equal(t, "malformed JSON", recs[2].Problem)
	require.Equal(t, 5, recs[3].Line, "line numbers count the blank line")
	require.Equal(t, []string{"Ana Müller", "Jörg Schäfer"}, recs[3].Paper.Authors)
}

func TestReaderMapsPaperlists(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "paperlists_sample.jsonl")
	require.Len(t, recs, 6)
	require.Equal(t, "Flash3D: Feed-Forward Generalisable 3D Scene Reconstruction from a Single Image", recs[0].Paper.Title)
	require.Equal(t, []string{"Novel View Synthesis", "3D Gaussian Splatting"}, recs[0].Keywords)
	var extra map[string]any
	require.NoError(t, json.Unmarshal(recs[0].Extra, &extra))
	require.Equal(t, map[string]any{"source_file": "3dv/3dv2025.json", "paper_id": "05T81ScPFb", "track": "main", "status": "Poster"}, extra)
	require.Equal(t, "status Reject", recs[1].Skip)
	require.Equal(t, "status Withdraw", recs[2].Skip)
	require.Equal(t, "doi:10.1145/3292500.3330000", recs[3].Paper.ID)
	require.Equal(t, "2503.11742", recs[4].Paper.ArxivID, "paperlists' arxiv field is the arXiv ID")
	require.Equal(t, "missing title", recs[5].Problem)
	require.Equal(t, 6, recs[5].Line)
}

func TestMapLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		line        string
		wantID      string
		wantVenue   string
		wantSkip    string
		wantProblem string
		wantWarning string
	}{
		{"PaperlistsAccepted", `{"source_file":"kdd/kdd2019.json","title":"GNN fraud","authors":["A"],"year":2019,"venue":"KDD","status":"Oral","doi":"10.1145/X","keywords":"a;b"}`, "doi:10.1145/x", "KDD", "", "", ""},
		{"PaperlistsArxivField", `{"source_file":"acl/acl.json","title":"T","authors":[],"year":2022,"venue":"ACL","status":"Long","arxiv":"2201.00001"}`, "arxiv:2201.00001", "ACL", "", "", ""},
		{"PaperlistsReject", `{"source_file":"iclr/iclr2018.json","title":"T","status":"Reject"}`, "", "", "status Reject", "", ""},
		{"PaperlistsWithdraw", `{"source_file":"iclr/iclr2018.json","title":"T","status":"Withdraw"}`, "", "", "status Withdraw", "", ""},
		{"PaperlistsDeskReject", `{"track":"main","title":"T","status":"Desk Reject"}`, "", "", "status Desk Reject", "", ""},
		{"GenericStringYearAndNamedAuthors", `{"title":"Generic","authors":[{"name":"B. Name"}],"year":"2001","pmid":12345}`, "pmid:12345", "", "", "", ""},
		{"MissingTitle", `{"arxiv_id":"2501.1","categories":["cs.AI"],"title":"  "}`, "", "", "", "missing title", ""},
		{"NotAnObject", `[1,2,3]`, "", "", "", "malformed JSON", ""},
		{"TitleWrongType", `{"title": 5}`, "", "", "", "malformed JSON", ""},
		{"YearOutOfRange", `{"title":"Far future","year":30000}`, "", "", "", "", "year 30000 out of range"},
		{"YearNotAYear", `{"title":"Bad year","year":"abc"}`, "", "", "", "", `year "abc" is not a year`},
		{"YearWrongType", `{"title":"Bad year","year":true}`, "", "", "", "", `year "true" is not a year`},
		{"YearHuge", `{"title":"Bad year","year":1e12}`, "", "", "", "", `year "1e12" is not a year`},
		{"YearDateString", `{"title":"Dated","year":"2021-05-01","doi":"10.1/d"}`, "doi:10.1/d", "", "", "", ""},
		{"YearUndated", `{"title":"Undated","year":"n.d.","doi":"10.1/u"}`, "doi:10.1/u", "", "", "", ""},
		{"YearNull", `{"title":"No year","year":null,"doi":"10.1/n"}`, "doi:10.1/n", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := jsonl.MapLine([]byte(tt.line))
			require.Equal(t, tt.wantSkip, rec.Skip)
			require.Equal(t, tt.wantProblem, rec.Problem)
			if tt.wantWarning != "" {
				require.Equal(t, []string{tt.wantWarning}, rec.Warnings)
				require.Zero(t, rec.Paper.Year)
			}
			if tt.wantID != "" {
				require.Equal(t, tt.wantID, rec.Paper.ID)
				require.Equal(t, tt.wantVenue, rec.Paper.Venue)
				require.NoError(t, rec.Paper.Validate())
			}
		})
	}
}

func TestReaderMapsQuarryExport(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "quarry_export.jsonl")
	require.Len(t, recs, 3)
	require.Equal(t, biblio.Record{
		Line: 1,
		Paper: research.RawPaper{
			ID: "doi:10.1/abc", Title: "Exported paper", Authors: []string{"Ana Müller", "Li Wei"}, Year: 2024,
			Venue: "Journal of Tests", Volume: "7", Issue: "2", Pages: "1-10", Abstract: "An abstract.",
			DOI: "10.1/ABC", ArxivID: "2401.00001", PMID: "123", URL: "https://example.org/p",
		},
		Type: biblio.Article, Keywords: []string{"a", "b"}, Mark: biblio.Relevant, Note: "keep; cite in intro",
	}, recs[0])

	second := recs[1]
	require.Empty(t, second.Problem)
	require.Equal(t, "12", second.Paper.Volume, "a numeric volume is read as text")
	require.Equal(t, "3", second.Paper.Issue)
	require.Equal(t, biblio.Misc, second.Type, "an unknown type is misc")
	require.Equal(t, biblio.Irrelevant, second.Mark, "an unknown mark is dropped and the note's mark prefix read instead")
	require.Equal(t, "duplicate", second.Note)

	require.Equal(t, "malformed JSON", recs[2].Problem)
	require.Equal(t, 3, recs[2].Line)
}

func TestReaderToleratesBOMCRLFAndLatin1(t *testing.T) {
	t.Parallel()
	recs := format().ReadFile(t, "bom_crlf.jsonl")
	require.Len(t, recs, 2)
	require.Equal(t, "BOM and CRLF", recs[0].Paper.Title)
	require.Equal(t, []string{"A. Person"}, recs[0].Paper.Authors)
	require.Equal(t, 3, recs[1].Line)
	require.Equal(t, "Latin-1 caf\uFFFD", recs[1].Paper.Title, "invalid UTF-8 is replaced, not fatal")
}

func TestReaderReportsReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	r := jsonl.NewReader(io.MultiReader(strings.NewReader("{\"title\":\"ok\"}\n"), iotest.ErrReader(boom)))
	rec, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, "ok", rec.Paper.Title)
	_, err = r.Next()
	require.ErrorIs(t, err, boom)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	orig := format().ReadFile(t, "roundtrip.jsonl")
	require.Len(t, orig, 10)
	seen := map[string]bool{}
	for _, r := range orig {
		require.Empty(t, r.Problem)
		seen[r.Type] = true
	}
	for _, typ := range append(biblitest.Types, "") {
		require.True(t, seen[typ], "the round-trip sample has a record of type %q", typ)
	}
	back, _ := format().RoundTrip(t, orig)
	for i := range back {
		require.Equal(t, i+1, back[i].Line)
	}
	format().RoundTrip(t, biblitest.Corpus(t))
}

// FuzzReader checks the reader's promises on any input and that what was
// read survives write → read unchanged (biblitest.Format.FuzzRoundTrip).
// The extra seed has names biblio.DisplayName once could not keep stable.
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/*.jsonl")
	f.Add([]byte(`{"title":"t","authors":["A, B, C, D","0 Sr"]}`))
	f.Fuzz(format().FuzzRoundTrip)
}

// BenchmarkRead100k reports records/s and peak heap for 100,000 records
// (biblitest.Format.BenchRead100k); peak_heap_MB far below file_MB shows
// the reader streams.
func BenchmarkRead100k(b *testing.B) { format().BenchRead100k(b) }

// TestMapLineYears: a year is a number, a numeric string or a date that
// starts with one; a value that is there but is none of these is reported
// with the value as a warning on a record imported without a year.
func TestMapLineYears(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]int{
		`{"title":"T","year":2019}`:         2019,
		`{"title":"T","year":"2001"}`:       2001,
		`{"title":"T","year":"2021-05-01"}`: 2021,
		`{"title":"T","year":"n.d."}`:       0,
		`{"title":"T"}`:                     0,
	} {
		rec := jsonl.MapLine([]byte(line))
		require.Empty(t, rec.Problem, line)
		require.Equal(t, want, rec.Paper.Year, line)
	}
	recs := format().Read(t, []byte("{\"title\":\"ok\",\"year\":2020}\n{\"title\":\"Good otherwise\",\"year\":\"abc\"}\n"))
	require.Len(t, recs, 2)
	require.Equal(t, 2, recs[1].Line)
	require.Empty(t, recs[1].Problem)
	require.Zero(t, recs[1].Paper.Year)
	require.Equal(t, []string{`year "abc" is not a year`}, recs[1].Warnings)
}
