package biblitest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

// Want is the part of a record a sample test checks, flat so that a table
// of samples reads one record to a few lines. Zero fields are checked too,
// so a missing field must really be missing.
type Want struct {
	Line                        int
	Type, Title                 string
	Authors                     []string
	Year                        int
	Venue, Volume, Issue, Pages string
	DOI, ArxivID, PMID, URL     string
	Abstract, Mark, Note        string
	Keywords                    []string
	// Problem, when set, is all that is checked besides Line: a record
	// the reader could not map has nothing else worth asserting.
	Problem string
}

// wantOf is what a sample test sees of rec.
func wantOf(rec biblio.Record) Want {
	p := rec.Paper
	return Want{
		Line: rec.Line, Type: rec.Type, Title: p.Title, Authors: p.Authors, Year: p.Year,
		Venue: p.Venue, Volume: p.Volume, Issue: p.Issue, Pages: p.Pages,
		DOI: p.DOI, ArxivID: p.ArxivID, PMID: p.PMID, URL: p.URL,
		Abstract: p.Abstract, Mark: rec.Mark, Note: rec.Note, Keywords: rec.Keywords,
		Problem: rec.Problem,
	}
}

// CheckSamples requires recs, read from a sample file, to be the records
// want describes, in order. A record without a Problem must also be valid
// and have no Source: the caller of a reader sets that.
func CheckSamples(t testing.TB, want []Want, recs []biblio.Record) {
	t.Helper()
	require.Len(t, recs, len(want))
	for i, w := range want {
		rec := recs[i]
		if w.Problem != "" {
			require.Equal(t, [2]any{w.Line, w.Problem}, [2]any{rec.Line, rec.Problem}, "record %d", i)
			continue
		}
		require.Equal(t, w, wantOf(rec), "record %d", i)
		require.Empty(t, rec.Paper.Source, "record %d: the caller sets Source", i)
		require.NoError(t, rec.Paper.Validate(), "record %d", i)
	}
}
