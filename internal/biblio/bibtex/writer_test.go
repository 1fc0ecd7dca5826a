package bibtex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/research"
)

// format is BibTeX for the shared harness. BibTeX has no entry type for
// "unknown": an untyped record is written as @misc and read back as Misc
// (see TestRoundTripUnknownType), so the round trip compares it as Misc.
// Several entries may share a line.
func format() biblitest.Format {
	f := biblitest.New(NewReader, NewWriter)
	f.Carried = biblitest.UntypedAsMisc
	return f
}

// records is the shared corpus plus what only BibTeX makes hard: an
// article with an eprint (not a preprint), an entry with nothing but a
// title, a note that mentions Quarry without being a mark.
func records(t testing.TB) []biblio.Record {
	t.Helper()
	recs := []biblio.Record{
		{Type: biblio.Article, Paper: research.RawPaper{Title: "Only on arXiv but typed as an article", ArxivID: "2101.00001", Authors: []string{"Ada Lovelace"}}},
		{Type: biblio.Article, Paper: research.RawPaper{Title: "Minimal"}},
		{Type: biblio.Book, Paper: research.RawPaper{Title: "The TeXbook", Authors: []string{"Donald E. Knuth"}, Year: 1984, Venue: "Addison-Wesley"}, Note: "Quarry is mentioned nowhere"},
	}
	for i := range recs {
		biblio.Finish(&recs[i])
		require.Empty(t, recs[i].Problem, recs[i].Paper.Title)
	}
	return append(recs, biblitest.Corpus(t)...)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	format().RoundTrip(t, records(t))
}

func TestRoundTripUnknownType(t *testing.T) {
	t.Parallel()
	out := format().Read(t, format().Write(t, []biblio.Record{{Paper: research.RawPaper{Title: "Untyped"}}}))
	require.Len(t, out, 1)
	require.Equal(t, biblio.Misc, out[0].Type)
}

func TestWriterOutput(t *testing.T) {
	t.Parallel()
	text := string(format().Write(t, []biblio.Record{
		{Type: biblio.Article, Paper: research.RawPaper{Title: "Deep learning of DNA", Authors: []string{"Hans Müller", "World Health Organization"}, Year: 2020, Venue: "Nature", Pages: "1-10"}, Mark: biblio.Relevant, Note: "good"},
		{Type: biblio.Conference, Paper: research.RawPaper{Title: "The deep learning", Authors: []string{"Hans Müller"}, Year: 2020, Venue: "ICML"}},
		{Type: biblio.Preprint, Paper: research.RawPaper{Title: "Deep again", Authors: []string{"Hans Müller"}, Year: 2020, ArxivID: "2001.00001"}},
		{Type: biblio.Thesis, Paper: research.RawPaper{Title: "Über Alles", Venue: "TU Wien"}},
	}))
	require.Equal(t, `@article{muller2020deep,
  title = {Deep learning of {DNA}},
  author = {Müller, Hans and {World Health Organization}},
  year = {2020},
  journal = {Nature},
  pages = {1-10},
  note = {Quarry mark: relevant; good},
}

@inproceedings{muller2020deepa,
  title = {The deep learning},
  author = {Müller, Hans},
  year = {2020},
  booktitle = {ICML},
}

@misc{muller2020deepb,
  title = {Deep again},
  author = {Müller, Hans},
  year = {2020},
  eprint = {2001.00001},
  archiveprefix = {arXiv},
  pubstate = {preprint},
}

@phdthesis{anonuber,
  title = {Über Alles},
  school = {TU Wien},
}

`, text)
}

func TestSuffix(t *testing.T) {
	t.Parallel()
	for i, want := range map[int]string{1: "a", 2: "b", 26: "z", 27: "aa", 28: "ab", 52: "az", 53: "ba"} {
		require.Equal(t, want, suffix(i), i)
	}
}

func TestKeysUnique(t *testing.T) {
	t.Parallel()
	recs := make([]biblio.Record, 60)
	for i := range recs {
		recs[i] = biblio.Record{Paper: research.RawPaper{Title: "Same title", Authors: []string{"Ann Lee"}, Year: 2000}}
	}
	text := string(format().Write(t, recs))
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "@") {
			k := line[strings.IndexByte(line, '{')+1 : len(line)-1]
			require.False(t, seen[k], k)
			seen[k] = true
		}
	}
	require.Len(t, seen, 60)
	require.True(t, seen["lee2000same"] && seen["lee2000samea"] && seen["lee2000sameaa"])
}

// TestWriterKeepsTheNameSplit: the writer writes the file's split
// (biblio.NamesOf), not a guess from the display form, and reads it back
// (issue 22, item 1: "Wong Kee Song, Louis M." came back as "Song, Louis
// M. Wong Kee" and "National Nurses United" as "United, National Nurses").
func TestWriterKeepsTheNameSplit(t *testing.T) {
	t.Parallel()
	names := []biblio.Name{
		{Last: "Wong Kee Song", First: "Louis M."},
		{Last: "Van de Walle", First: "Rik"},
		{Last: "El Khoury", First: "Rita"},
		{Literal: "National Nurses United"},
		{Last: "Smith", First: "John", Suffix: "Jr."},
		{Last: "De Gaulle"},
		{Last: "Barnes and Noble", First: "X, Y"},
	}
	rec := biblio.Record{Type: biblio.Article, Paper: research.RawPaper{Title: "Names"}, Names: names}
	biblio.Finish(&rec)
	var b strings.Builder
	w := NewWriter(&b)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.Contains(t, b.String(), "author = {Wong Kee Song, Louis M. and Van de Walle, Rik and El Khoury, Rita and {National Nurses United} and Smith, Jr., John and De Gaulle, and {Barnes and Noble}, {X, Y}}")
	got := biblitest.ReadAll(t, NewReader(strings.NewReader(b.String())))
	require.Len(t, got, 1)
	require.Equal(t, names, got[0].Names)
}

// TestWriterKeepsExtraFields: the fields a reader kept in Extra (publisher,
// ISBN, editor, address, the entry type and key) are written back and read
// back the same (issue 22, item 6: they vanished on export).
func TestWriterKeepsExtraFields(t *testing.T) {
	t.Parallel()
	extra := `{"bibtex_type":"inbook","bibtex_key":"doe2020ch","publisher":"Kumarian Press","isbn":"978-3-16-148410-0","editor":"Roe, Richard and Müller, Jörg","address":"Bloomfield, CT","edition":"2nd","month":"May","series":"Studies in {Things} & 50%"}`
	rec := biblio.Record{Type: biblio.Chapter, Paper: research.RawPaper{Title: "A chapter", Year: 2020, Venue: "The Book"}, Extra: []byte(extra)}
	biblio.Finish(&rec)
	var b strings.Builder
	w := NewWriter(&b)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.True(t, strings.HasPrefix(b.String(), "@inbook{doe2020ch,\n"), b.String())
	got := biblitest.ReadAll(t, NewReader(strings.NewReader(b.String())))
	require.Len(t, got, 1)
	require.JSONEq(t, extra, string(got[0].Extra))
	require.Equal(t, biblio.Chapter, got[0].Type)
}

// TestWriterKeepsAYearThatIsNotOne: a year field that gave a warning is
// written back as it was, so a re-import warns again instead of silently
// having no year.
func TestWriterKeepsAYearThatIsNotOne(t *testing.T) {
	t.Parallel()
	recs := biblitest.ReadAll(t, NewReader(strings.NewReader("@article{a, title={T}, year={unknown}}\n")))
	require.Len(t, recs, 1)
	var b strings.Builder
	w := NewWriter(&b)
	require.NoError(t, w.Write(recs[0]))
	require.NoError(t, w.Close())
	require.Contains(t, b.String(), "year = {unknown}")
	back := biblitest.ReadAll(t, NewReader(strings.NewReader(b.String())))
	require.Equal(t, recs[0].Warnings, back[0].Warnings)
}

// TestReimportAddsNothingToExtra: an export read back adds no bibtex_key or
// bibtex_type to a record that had none, so re-importing a library's own
// export into it reads as unchanged; a key or type of the file's own stays.
func TestReimportAddsNothingToExtra(t *testing.T) {
	t.Parallel()
	recs := records(t)
	var b strings.Builder
	w := NewWriter(&b)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	back := biblitest.ReadAll(t, NewReader(strings.NewReader(b.String())))
	require.Len(t, back, len(recs))
	for i, r := range back {
		require.Empty(t, string(r.Extra), "record %d (%s)", i, recs[i].Paper.Title)
	}
	own := biblitest.ReadAll(t, NewReader(strings.NewReader("@inbook{myownkey, title={T}, author={Doe, Jane}, year={2020}}\n@incollection{doe2020t, title={T}, author={Doe, Jane}, year={2020}}\n")))
	require.JSONEq(t, `{"bibtex_key":"myownkey","bibtex_type":"inbook"}`, string(own[0].Extra))
	require.Empty(t, own[1].Extra)
}
