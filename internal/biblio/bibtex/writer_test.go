package bibtex

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/skills"
)

// roundTrip writes recs and reads them back.
func roundTrip(t testing.TB, recs []biblio.Record) ([]biblio.Record, string) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	return readAll(t, bytes.NewReader(buf.Bytes())), buf.String()
}

func finished(r biblio.Record) biblio.Record {
	biblio.Finish(&r)
	return r
}

// sampleRecords is a varied set: every type, unicode, LaTeX-special
// characters, multi-paragraph abstracts, missing fields, particles and
// suffixes in names, marks and notes with semicolons.
func sampleRecords() []biblio.Record {
	return []biblio.Record{
		{Type: biblio.Article, Paper: skills.RawPaper{
			Title:   "Deep learning for DNA & RNA: 50% better $x^2$ #1 with_under {braces} ~tilde^caret \\backslash",
			Authors: []string{"John Smith", "Hans Müller", "Ludwig van Beethoven", "Martin Luther King Jr.", "World Health Organization", "Plato"},
			Year:    2020, Venue: "Nature Methods", Volume: "17", Issue: "3", Pages: "245-252",
			Abstract: "First paragraph -- with ``quotes'' and a line\nbreak.\n\nSecond paragraph; ends here.\n\n\nThird after two blank lines.",
			DOI:      "10.1038/s41592-020-0001-x", PMID: "32123456", URL: "https://example.org/a_b%20c~d?x={1}",
		}, Keywords: []string{"deep learning", "proteins; folding", "a, b"}, Mark: biblio.Relevant, Note: "check methods; then results"},
		{Type: biblio.Article, Paper: skills.RawPaper{Title: "Only on arXiv but typed as an article", ArxivID: "2101.00001", Authors: []string{"Ada Lovelace"}}},
		{Type: biblio.Conference, Paper: skills.RawPaper{Title: "Attention is all you need", Authors: []string{"Ashish Vaswani", "Łukasz Kaiser"},
			Year: 2017, Venue: "NeurIPS", Pages: "5998-6008", ArxivID: "1706.03762"}, Mark: biblio.Irrelevant},
		{Type: biblio.Preprint, Paper: skills.RawPaper{Title: "A bioRxiv preprint", Authors: []string{"Jane Doe"}, Year: 2023, Venue: "bioRxiv", DOI: "10.1101/2023.01.01.123456"}},
		{Type: biblio.Preprint, Paper: skills.RawPaper{Title: "An arXiv preprint", ArxivID: "hep-th/9901001v2", Year: 1999}},
		{Type: biblio.Book, Paper: skills.RawPaper{Title: "The TeXbook", Authors: []string{"Donald E. Knuth"}, Year: 1984, Venue: "Addison-Wesley"}, Note: "Quarry is mentioned nowhere"},
		{Type: biblio.Chapter, Paper: skills.RawPaper{Title: "Ein Kapitel über Straßen", Authors: []string{"Jürgen Groß"}, Venue: "Handbuch der Dinge", Pages: "1--20"}},
		{Type: biblio.Thesis, Paper: skills.RawPaper{Title: "Modelos estadísticos", Authors: []string{"José Luis García"}, Year: 2019, Venue: "Universidad de Sevilla"}},
		{Type: biblio.Report, Paper: skills.RawPaper{Title: "Technical report 7", Authors: []string{"Barnes and Noble", "others"}, Issue: "TR-7", Venue: "Stanford University"}},
		{Type: biblio.Misc, Paper: skills.RawPaper{Title: "A web page", URL: "http://x.org/\\@{}", Venue: "Blog", ArxivID: "2202.00002"}},
		{Type: biblio.Misc, Paper: skills.RawPaper{Title: "日本語のタイトル ☃ Ωmega", Authors: []string{"山田 太郎"}}},
		{Type: biblio.Article, Paper: skills.RawPaper{Title: "Minimal"}},
		{Type: biblio.Article, Paper: skills.RawPaper{Title: "Ligatures --- and '' and `` and -- in a title",
			Abstract: "Ends with a backslash \\", Authors: []string{"O'Brien, Conan", "Jean-Paul Sartre", "Charles de Gaulle"}}},
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	in := sampleRecords()
	out, text := roundTrip(t, in)
	require.Len(t, out, len(in), text)
	for i := range in {
		want := biblio.Comparable(finished(in[i]))
		require.Empty(t, out[i].Problem, text)
		require.Equal(t, want, biblio.Comparable(out[i]), "record %d in\n%s", i, text)
	}
}

// TestRoundTripUnknownType documents the one lossy case: BibTeX has no
// entry type for "unknown", so it comes back as Misc.
func TestRoundTripUnknownType(t *testing.T) {
	t.Parallel()
	out, _ := roundTrip(t, []biblio.Record{{Paper: skills.RawPaper{Title: "Untyped"}}})
	require.Len(t, out, 1)
	require.Equal(t, biblio.Misc, out[0].Type)
}

func TestWriterOutput(t *testing.T) {
	t.Parallel()
	_, text := roundTrip(t, []biblio.Record{
		{Type: biblio.Article, Paper: skills.RawPaper{Title: "Deep learning of DNA", Authors: []string{"Hans Müller", "World Health Organization"}, Year: 2020, Venue: "Nature", Pages: "1-10"}, Mark: biblio.Relevant, Note: "good"},
		{Type: biblio.Conference, Paper: skills.RawPaper{Title: "The deep learning", Authors: []string{"Hans Müller"}, Year: 2020, Venue: "ICML"}},
		{Type: biblio.Preprint, Paper: skills.RawPaper{Title: "Deep again", Authors: []string{"Hans Müller"}, Year: 2020, ArxivID: "2001.00001"}},
		{Type: biblio.Thesis, Paper: skills.RawPaper{Title: "Über Alles", Venue: "TU Wien"}},
	})
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
		recs[i] = biblio.Record{Paper: skills.RawPaper{Title: "Same title", Authors: []string{"Ann Lee"}, Year: 2000}}
	}
	_, text := roundTrip(t, recs)
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
