package library_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
	"quarry/internal/store"
)

func importText(t *testing.T, st *store.Store, name, text string, opts library.ImportOptions) library.ImportStats {
	t.Helper()
	r, err := library.NewReader(strings.NewReader(text), name, codecs.Options{})
	require.NoError(t, err)
	stats, err := library.Import(context.Background(), st, r.Next, opts)
	require.NoError(t, err)
	return stats
}

// TestDistinctWorksSharingADOIAreKeptApart: a collection and a chapter of
// it with the same DOI are two works; the import keeps both and says so,
// within one file, against the library, in a bulk load, and idempotently.
// A second version of the same work under the DOI still updates it.
func TestDistinctWorksSharingADOIAreKeptApart(t *testing.T) {
	t.Parallel()
	const bib = `@collection{book,
  title = {Handbook of Sleep Research},
  editor = {Dringenberg, Hans C.},
  year = {2019},
  doi = {10.1016/B978-0-12-813743-7.00001-1}
}
@incollection{chapter,
  title = {Memory consolidation during slow-wave sleep},
  author = {Born, Jan},
  booktitle = {Handbook of Sleep Research},
  year = {2019},
  doi = {10.1016/B978-0-12-813743-7.00001-1}
}
`
	for _, bulk := range []bool{false, true} {
		st := openStore(t)
		opts := library.ImportOptions{}
		if bulk {
			opts.BatchSize = 1
		}
		stats := importText(t, st, "h.bib", bib, opts)
		require.Equal(t, 2, stats.Inserted, "bulk=%v: both works are stored", bulk)
		require.Equal(t, 0, stats.Updated)
		require.Equal(t, 1, stats.Warned)
		require.Equal(t, 7, stats.Warnings[0].Line)
		require.Contains(t, stats.Warnings[0].Reason, "different work")
		require.Contains(t, stats.Warnings[0].Reason, "Handbook of Sleep Research")
		n, err := st.LibraryCount(context.Background())
		require.NoError(t, err)
		require.Equal(t, 2, n)

		again := importText(t, st, "h.bib", bib, opts)
		require.Equal(t, 2, again.Unchanged, "bulk=%v: a re-import changes nothing: %+v", bulk, again)

		// The chapter alone, against the library: kept apart, not merged.
		chapter := bib[strings.Index(bib, "@incollection"):]
		alone := importText(t, st, "c.bib", strings.Replace(chapter, "Born, Jan", "Born, Jan and Rasch, Björn", 1), opts)
		require.Equal(t, 1, alone.Updated, "the chapter kept apart before is updated: %+v", alone)
		require.Equal(t, 1, alone.Warned)

		// The same work again under its DOI (a corrected title) updates it.
		fixed := importText(t, st, "b.bib", strings.Replace(bib[:strings.Index(bib, "@incollection")], "Handbook of Sleep Research", "Handbook of Sleep Research, 2nd edition", 1), opts)
		require.Equal(t, 1, fixed.Updated, "%+v", fixed)
		require.Equal(t, 0, fixed.Warned)
	}
}

// TestAYearThatIsNotOneIsAWarning: EndNote's template placeholder "Year"
// and other non-years used to cost the record; it now imports without a
// year and the import lists the warning with its line.
func TestAYearThatIsNotOneIsAWarning(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	stats := importText(t, st, "y.csv", "title,year,doi\nKept,Year,10.1/kept\nDated,2020,10.1/dated\n", library.ImportOptions{})
	require.Equal(t, 2, stats.Inserted)
	require.Equal(t, 1, stats.Warned)
	require.Equal(t, 2, stats.Warnings[0].Line)
	require.Equal(t, `year "Year" is not a year`, stats.Warnings[0].Reason)
	p, err := st.LibraryPaperByID(context.Background(), "doi:10.1/kept")
	require.NoError(t, err)
	require.Zero(t, p.Year)
}
