package biblio_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

func TestNoteFieldRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct{ mark, note, field string }{
		{"", "", ""},
		{"", "read later", "read later"},
		{biblio.Relevant, "", "Quarry mark: relevant"},
		{biblio.Irrelevant, "wrong population; adults only", "Quarry mark: irrelevant; wrong population; adults only"},
	}
	for _, c := range cases {
		require.Equal(t, c.field, biblio.NoteField(c.mark, c.note))
		m, n := biblio.SplitNote(c.field)
		require.Equal(t, c.mark, m, c.field)
		require.Equal(t, c.note, n, c.field)
	}
	// A note that merely mentions the words is not a mark.
	m, n := biblio.SplitNote("Quarry mark: relevantish")
	require.Empty(t, m)
	require.Equal(t, "Quarry mark: relevantish", n)
}

func TestParseName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    biblio.Name
		display string
		inv     string
	}{
		{"Smith, John", biblio.Name{Last: "Smith", First: "John"}, "John Smith", "Smith, John"},
		{"John Smith", biblio.Name{Last: "Smith", First: "John"}, "John Smith", "Smith, John"},
		{"Ludwig van Beethoven", biblio.Name{Last: "van Beethoven", First: "Ludwig"}, "Ludwig van Beethoven", "van Beethoven, Ludwig"},
		{"King, Jr., Martin Luther", biblio.Name{Last: "King", First: "Martin Luther", Suffix: "Jr."}, "Martin Luther King Jr.", "King, Martin Luther, Jr."},
		{"King, Martin Luther, Jr.", biblio.Name{Last: "King", First: "Martin Luther", Suffix: "Jr."}, "Martin Luther King Jr.", "King, Martin Luther, Jr."},
		{"Martin Luther King Jr.", biblio.Name{Last: "King", First: "Martin Luther", Suffix: "Jr."}, "Martin Luther King Jr.", "King, Martin Luther, Jr."},
		{"Plato", biblio.Name{Last: "Plato"}, "Plato", "Plato"},
		{"  de  la Fontaine,  Jean ", biblio.Name{Last: "de la Fontaine", First: "Jean"}, "Jean de la Fontaine", "de la Fontaine, Jean"},
		{"Gates, , Sr.", biblio.Name{Last: "Gates", Suffix: "Sr."}, "Gates Sr.", "Gates, , Sr."},
		// Capitalised particles stay with the family name too.
		{"Hans P. A. Van Dongen", biblio.Name{Last: "Van Dongen", First: "Hans P. A."}, "Hans P. A. Van Dongen", "Van Dongen, Hans P. A."},
		{"Johannes Diderik Van Der Waals", biblio.Name{Last: "Van Der Waals", First: "Johannes Diderik"}, "Johannes Diderik Van Der Waals", "Van Der Waals, Johannes Diderik"},
		{"Maria De La Cruz", biblio.Name{Last: "De La Cruz", First: "Maria"}, "Maria De La Cruz", "De La Cruz, Maria"},
		{"Ursula Von Der Leyen", biblio.Name{Last: "Von Der Leyen", First: "Ursula"}, "Ursula Von Der Leyen", "Von Der Leyen, Ursula"},
		{"Leonardo Da Vinci", biblio.Name{Last: "Da Vinci", First: "Leonardo"}, "Leonardo Da Vinci", "Da Vinci, Leonardo"},
		{"Anna Le Roux", biblio.Name{Last: "Le Roux", First: "Anna"}, "Anna Le Roux", "Le Roux, Anna"},
		// The first word is always a given name, even when it is a particle.
		{"Van Morrison", biblio.Name{Last: "Morrison", First: "Van"}, "Van Morrison", "Morrison, Van"},
	}
	for _, c := range cases {
		got := biblio.ParseName(c.in)
		require.Equal(t, c.want, got, c.in)
		require.Equal(t, c.display, got.Display(), c.in)
		require.Equal(t, c.inv, got.Inverted(), c.in)
		// Display and Inverted forms read back as the same name.
		require.Equal(t, got, biblio.ParseName(got.Inverted()), c.in)
		require.Equal(t, got.Display(), biblio.DisplayName(got.Display()), c.in)
	}
}

// TestDisplayNameIsIdempotent: readers apply DisplayName to every author,
// and a record read, written and read again must keep its names, so a
// second application must change nothing, even for malformed input.
func TestDisplayNameIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"A, B, C, D", "0, Sr", "Smith,, John", ", ,", "Jr.", "x, Jr., y, z", "van, der, Berg"} {
		once := biblio.DisplayName(in)
		require.Equal(t, once, biblio.DisplayName(once), in)
		require.Equal(t, once, biblio.DisplayName(biblio.ParseName(once).Inverted()), "%q inverted and read back", in)
	}
}

func TestFinish(t *testing.T) {
	t.Parallel()
	r := biblio.Record{Paper: research.RawPaper{
		Title:   "  Deep   learning ",
		Authors: []string{"LeCun, Yann", " ", "Bengio, Yoshua"},
		DOI:     "https://doi.org/10.1038/nature14539",
		Year:    2015,
	}, Note: "Quarry mark: relevant; seminal review", Keywords: []string{" ", "deep learning"}}
	biblio.Finish(&r)
	require.Empty(t, r.Problem)
	require.Equal(t, "Deep learning", r.Paper.Title)
	require.Equal(t, []string{"Yann LeCun", "Yoshua Bengio"}, r.Paper.Authors)
	require.Equal(t, "10.1038/nature14539", r.Paper.DOI)
	require.Equal(t, "doi:10.1038/nature14539", r.Paper.ID)
	require.Equal(t, biblio.Relevant, r.Mark)
	require.Equal(t, "seminal review", r.Note)
	require.Equal(t, []string{"deep learning"}, r.Keywords)

	bad := biblio.Record{Paper: research.RawPaper{Title: " "}}
	biblio.Finish(&bad)
	require.Equal(t, "missing title", bad.Problem)
	old := biblio.Record{Paper: research.RawPaper{Title: "x", Year: 30000}}
	biblio.Finish(&old)
	require.Empty(t, old.Problem, "an impossible year does not cost the record")
	require.Zero(t, old.Paper.Year)
	require.Equal(t, []string{"year 30000 out of range"}, old.Warnings)
}

func TestDetect(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"% my refs\n\n@Article{key,\n title={x}}":              biblio.BibTeX,
		"\xef\xbb\xbfTY  - JOUR\r\nTI  - x\r\nER  - \r\n":      biblio.RIS,
		"\nPMID- 12345678\nOWN - NLM\nTI  - x\n":               biblio.MEDLINE,
		"OWN - NLM\nSTAT- Publisher\nTI  - no PMID first\n":    biblio.MEDLINE,
		"PT\tAU\tAF\tTI\tSO\nJ\tSmith, J\tSmith, John\tx\ty\n": biblio.CSV,
		"{\n  \"type\": \"book\",\n  \"title\": \"x\"\n}\n":    biblio.CSLJSON,
		"  [{\"type\":\"article-journal\",\"title\":\"x\"}]":   biblio.CSLJSON,
		"{\"title\":\"x\"}\n{\"title\":\"y\"}\n":               biblio.JSONL,
		"Title,Authors,Year\nx,y,2020\n":                       biblio.CSV,
		"title;year\nx;2020\n":                                 biblio.CSV,
		"hello world\n":                                        "",
		"":                                                     "",
	}
	for in, want := range cases {
		require.Equal(t, want, biblio.Detect([]byte(in)), "%q", in)
	}
}

func TestNotAYear(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "  ", "0", "0000", "n.d.", "N.D.", "nd", "[n.d.]", "(in press)", "{Forthcoming}", "to appear", "s.d."} {
		require.Empty(t, biblio.NotAYear(v), "%q is an unknown year, not a mistake", v)
	}
	require.Equal(t, `year "abc" is not a year`, biblio.NotAYear(" abc "))
	require.Equal(t, `year "12345" is not a year`, biblio.NotAYear("12345"))
	long := biblio.NotAYear("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod")
	require.Equal(t, `year "Lorem ipsum dolor sit amet, consectetur…" is not a year`, long, "a long value is cut")
}

func TestFinishKeepsTheFilesNameSplit(t *testing.T) {
	r := biblio.Record{Paper: research.RawPaper{Title: "T"}, Names: []biblio.Name{
		{Last: "Wong Kee Song", First: "Louis M."}, {Literal: "National Nurses United"}, {}, {Last: "El Khoury", First: "Rita"},
	}}
	biblio.Finish(&r)
	require.Equal(t, []string{"Louis M. Wong Kee Song", "National Nurses United", "Rita El Khoury"}, r.Paper.Authors)
	inv := []string{}
	for _, n := range biblio.NamesOf(r) {
		inv = append(inv, n.Inverted())
	}
	// Guessed again from the display form, the first would be "Song, Louis M. Wong Kee".
	require.Equal(t, []string{"Wong Kee Song, Louis M.", "National Nurses United", "El Khoury, Rita"}, inv)

	plain := biblio.Record{Paper: research.RawPaper{Title: "T", Authors: []string{"Ludwig van Beethoven"}}}
	biblio.Finish(&plain)
	require.Equal(t, []biblio.Name{{Last: "van Beethoven", First: "Ludwig"}}, biblio.NamesOf(plain))
}

func TestScripts(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"2": "₂", "12": "₁₂", "ij": "ᵢⱼ", "x": "ₓ"} {
		got, ok := biblio.Subscript(in)
		require.True(t, ok, in)
		require.Equal(t, want, got)
	}
	got, ok := biblio.Superscript("-1")
	require.True(t, ok)
	require.Equal(t, "⁻¹", got)
	_, ok = biblio.Subscript("Q")
	require.False(t, ok)
}

func TestBeforeCommonEra(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"44 BC", "500 B.C.E.", "4000 BC", "-0043", "-43/03/15", "BCE 12", "c. 300 bc"} {
		require.True(t, biblio.BeforeCommonEra(s), s)
	}
	for _, s := range []string{"2020", "2020/05/01", "ABC 2020", "2020-05", "Dec 2019", "1999 BCS Conference"} {
		require.False(t, biblio.BeforeCommonEra(s), s)
	}
}

// TestFinishSplitsNamesRunTogether: an author entry holding several names
// separated by ';' (as one corpus record has) is several authors, so a CSV
// export, which lists names with ';', reads back the same.
func TestFinishSplitsNamesRunTogether(t *testing.T) {
	t.Parallel()
	r := biblio.Record{Paper: research.RawPaper{Title: "T", Authors: []string{"Ana Lima; Rejani Bandeira Vieira Sousa", "Bo Li"}}}
	biblio.Finish(&r)
	require.Equal(t, []string{"Ana Lima", "Rejani Bandeira Vieira Sousa", "Bo Li"}, r.Paper.Authors)
}

// A paper from a search source carries the source's split, and every
// writer uses it rather than a guess; a file's own split still wins.
func TestNamesOfUsesTheSourcesSplit(t *testing.T) {
	t.Parallel()
	rec := biblio.Record{Paper: research.RawPaper{
		Authors:     []string{"Louis M. Wong Kee Song", "National Nurses United"},
		AuthorNames: []research.AuthorName{{Family: "Wong Kee Song", Given: "Louis M."}, {Literal: "National Nurses United"}},
	}}
	require.Equal(t, []biblio.Name{{Last: "Wong Kee Song", First: "Louis M."}, {Literal: "National Nurses United"}}, biblio.NamesOf(rec))
	guessed := rec
	guessed.Paper.AuthorNames = nil
	require.Equal(t, "Song", biblio.NamesOf(guessed)[0].Last, "without a split the name is guessed")
	own := rec
	own.Names = []biblio.Name{{Last: "A"}, {Last: "B"}}
	require.Equal(t, own.Names, biblio.NamesOf(own))
}
