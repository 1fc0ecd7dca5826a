package library_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

// TestPeerFilesImportWhole imports every peer fixture file a format
// reader is checked against (other projects' test files, under
// internal/biblio/*/testdata/peers) into a fresh library: every readable
// record must be a paper there under its own title, so no import merges two
// distinct works (a chapter and its book sharing a DOI) or loses one.
func TestPeerFilesImportWhole(t *testing.T) {
	t.Parallel()
	var files []string
	require.NoError(t, filepath.WalkDir("../biblio", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.Contains(path, "testdata/peers/") {
			return nil
		}
		switch filepath.Ext(path) {
		case ".bib", ".ris", ".nbib", ".txt", ".gz", ".json":
			files = append(files, path)
		}
		return nil
	}))
	sort.Strings(files)
	require.NotEmpty(t, files)
	ctx := context.Background()
	imported, readable, kept, apart := 0, 0, 0, 0
	for _, f := range files {
		r, err := library.Open(f, codecs.Options{})
		if err != nil {
			continue // not a bibliographic file (a peer's expected parse)
		}
		var recs []library.Record
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				recs = nil // not one of the formats: expected parses, Zotero's test cases
				break
			}
			recs = append(recs, rec)
		}
		r.Close()
		titles := map[string]bool{}
		for _, rec := range recs {
			if rec.Problem == "" && rec.Skip == "" && rec.Paper.Validate() == nil {
				titles[research.NormalizeTitle(rec.Paper.Title)] = true
			}
		}
		if len(titles) == 0 {
			continue
		}
		st := openStore(t)
		stats, err := library.Import(ctx, st, stream(recs), library.ImportOptions{})
		require.NoError(t, err, f)
		stored := map[string]bool{}
		require.NoError(t, st.EachLibraryPaper(ctx, func(p store.LibraryPaper) error {
			stored[research.NormalizeTitle(p.Title)] = true
			return nil
		}))
		for title := range titles {
			require.True(t, stored[title], "%s: %q was merged into another work or lost", f, title)
		}
		imported++
		readable += stats.Inserted + stats.Updated + stats.Unchanged
		kept += len(stored)
		for _, w := range stats.Warnings {
			if strings.Contains(w.Reason, "different work") {
				apart++
			}
		}
	}
	fmt.Printf("peers: library files=%d readable=%d stored=%d kept_apart=%d distinct_works_merged=0\n", imported, readable, kept, apart)
	require.Positive(t, imported)
}
