package library_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
	"quarry/internal/shareddata"
	"quarry/internal/store"
)

// roundTripEvery samples the corpora for the round trip in make test (its
// own step, without -race, which slows it past ten minutes);
// QUARRY_ROUNDTRIP=full (make roundtrip) takes every record.
const roundTripEvery = 25

// TestCorpusRoundTrip exports the shared corpora from a library in every
// format and imports each export into a fresh library and into the same
// one: every field Quarry keeps must come back as it was, and the same
// library must find nothing new or changed.
func TestCorpusRoundTrip(t *testing.T) {
	files := shareddata.CorpusFiles()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("corpus not present (%v): the round trip needs %s", err, shareddata.Dir("corpus"))
		}
	}
	full := os.Getenv("QUARRY_ROUNDTRIP") == "full"
	ctx := context.Background()
	recs := roundTripRecords(t, files, full)
	src := openStore(t)
	stats, err := library.Import(ctx, src, stream(recs), library.ImportOptions{})
	require.NoError(t, err)
	want := libraryPapers(t, src)
	require.Equal(t, stats.Inserted, len(want))

	// Every export is written from the library as first imported; the
	// re-imports into it come after, each checked against it as it was.
	dir := t.TempDir()
	paths := map[string]string{}
	for _, format := range biblio.Formats {
		path := filepath.Join(dir, "export"+codecs.Extension(format))
		f, err := os.Create(path)
		require.NoError(t, err)
		bw := bufio.NewWriter(f)
		out, err := codecs.NewWriter(bw, format)
		require.NoError(t, err)
		require.NoError(t, library.Export(ctx, src, out))
		require.NoError(t, bw.Flush())
		require.NoError(t, f.Close())
		paths[format] = path
	}
	for _, format := range biblio.Formats {
		fresh := openStore(t)
		back, err := library.ImportFiles(ctx, fresh, []string{paths[format]}, codecs.Options{Format: format}, library.ImportOptions{})
		require.NoError(t, err, format)
		diffs, examples := comparePapers(want, libraryPapers(t, fresh), format == biblio.JSONL)

		same, err := library.ImportFiles(ctx, src, []string{paths[format]}, codecs.Options{Format: format}, library.ImportOptions{})
		require.NoError(t, err, format)
		sameDiffs, sameExamples := comparePapers(want, libraryPapers(t, src), true)
		fmt.Printf("roundtrip: format=%s records=%d read_back=%d skipped=%d warned=%d fresh_diffs=%d same_inserted=%d same_updated=%d same_unchanged=%d same_diffs=%d %s\n",
			format, len(want), back.Read, back.Skipped, back.Warned, total(diffs), same.Inserted, same.Updated, same.Unchanged, total(sameDiffs), summary(diffs))
		for _, e := range append(examples, sameExamples...) {
			t.Logf("%s: %s", format, e)
		}
		assert.Zero(t, total(diffs), "%s: fields changed by the round trip", format)
		assert.Zero(t, same.Inserted+same.Updated, "%s: re-importing the export changed the library", format)
		assert.Zero(t, total(sameDiffs), "%s: re-importing the export changed the library's papers", format)
	}
}

// roundTripRecords reads the corpora's readable records, every one or a
// sample.
func roundTripRecords(t *testing.T, files []string, full bool) []library.Record {
	t.Helper()
	var out []library.Record
	for _, f := range files {
		r, err := library.Open(f, codecs.Options{})
		require.NoError(t, err)
		for i := 0; ; i++ {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if rec.Problem == "" && rec.Skip == "" && (full || i%roundTripEvery == 0) {
				out = append(out, rec)
			}
		}
		require.NoError(t, r.Close())
	}
	return out
}

// stream yields recs, then io.EOF.
func stream(recs []library.Record) library.Next {
	i := 0
	return func() (library.Record, error) {
		if i == len(recs) {
			return library.Record{}, io.EOF
		}
		i++
		return recs[i-1], nil
	}
}

func libraryPapers(t *testing.T, st *store.Store) map[string]biblio.Record {
	t.Helper()
	out := map[string]biblio.Record{}
	require.NoError(t, st.EachLibraryPaper(context.Background(), func(p store.LibraryPaper) error {
		out[p.ID] = library.ToBiblio(p.RawPaper, p.Extra)
		return nil
	}))
	return out
}

// comparePapers counts, per field, the papers of want that came back
// different in got (or not at all), with a few examples. Every field is
// compared, the whole extra object in a format that carries all of it
// (JSON Lines); elsewhere the bibliographic entries every format keeps
// (biblio.Extra* keys), since a corpus's own fields (arXiv categories) have
// no place in RIS and a re-import keeps them (the store merges extra).
func comparePapers(want, got map[string]biblio.Record, wholeExtra bool) (map[string]int, []string) {
	diffs := map[string]int{}
	var examples []string
	note := func(field, id string, a, b any) {
		diffs[field]++
		if diffs[field] <= 3 {
			examples = append(examples, fmt.Sprintf("%s %s: %#v → %#v", id, field, a, b))
		}
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			note("missing", id, w.Paper.Title, nil)
			continue
		}
		wp, gp := w.Paper, g.Paper
		for _, f := range []struct {
			name string
			a, b any
		}{
			{"title", wp.Title, gp.Title}, {"authors", wp.Authors, gp.Authors}, {"year", wp.Year, gp.Year},
			{"venue", wp.Venue, gp.Venue}, {"volume", wp.Volume, gp.Volume}, {"issue", wp.Issue, gp.Issue},
			{"pages", wp.Pages, gp.Pages}, {"abstract", wp.Abstract, gp.Abstract}, {"doi", wp.DOI, gp.DOI},
			{"arxiv_id", wp.ArxivID, gp.ArxivID}, {"pmid", wp.PMID, gp.PMID}, {"url", wp.URL, gp.URL},
			{"type", w.Type, g.Type}, {"keywords", w.Keywords, g.Keywords},
		} {
			if !reflect.DeepEqual(f.a, f.b) {
				note(f.name, id, f.a, f.b)
			}
		}
		if wn, gn := biblio.NamesOf(w), biblio.NamesOf(g); len(wn) != len(gn) || !sameNames(wn, gn) {
			note("names", id, wn, gn)
		}
		if wholeExtra {
			if !jsonEqual(w.Extra, g.Extra) {
				note("extra", id, string(w.Extra), string(g.Extra))
			}
			continue
		}
		we, ge := biblio.ExtraFields(w), biblio.ExtraFields(g)
		for _, k := range []string{biblio.ExtraPublisher, biblio.ExtraAddress, biblio.ExtraISBN, biblio.ExtraISSN,
			biblio.ExtraEditor, biblio.ExtraEdition, biblio.ExtraSeries, biblio.ExtraLanguage} {
			if we[k] != ge[k] {
				note(k, id, we[k], ge[k])
			}
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			note("new", id, nil, got[id].Paper.Title)
		}
	}
	return diffs, examples
}

func sameNames(a, b []biblio.Name) bool {
	for i := range a {
		if !a[i].Same(b[i]) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func summary(m map[string]int) string {
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return "(" + strings.Join(parts, " ") + ")"
}
