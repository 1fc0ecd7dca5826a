package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/store"
)

func TestImportCommandEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "q.db")
	files := []string{"../../internal/library/testdata/arxiv_sample.jsonl", "../../internal/library/testdata/paperlists_sample.jsonl"}
	env := func(k string) string {
		if k == "QUARRY_DB" {
			return db
		}
		return ""
	}

	var out bytes.Buffer
	require.NoError(t, run(ctx, append([]string{"import"}, files...), env, &out))
	text := out.String()
	require.Contains(t, text, "arxiv_sample.jsonl:3: malformed JSON\n")
	require.Contains(t, text, "paperlists_sample.jsonl:6: missing title\n")
	require.Regexp(t, regexp.MustCompile(`(?m)^imported 5 new, 1 updated, 4 skipped \(1 malformed JSON, 1 missing title, 1 status Reject, 1 status Withdraw\) in [0-9.]+ s$`), text)

	// Again, with --db overriding the environment's database: all updates.
	out.Reset()
	require.NoError(t, run(ctx, []string{"import", "--db", db, "--format", "jsonl", files[0]}, func(string) string { return "" }, &out))
	require.Regexp(t, `(?m)^imported 0 new, 3 updated, 1 skipped \(1 malformed JSON\) in [0-9.]+ s$`, out.String())

	st, err := store.Open(ctx, db, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	n, err := st.LibraryCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	got, err := st.SearchLibrary(ctx, `"retrieval-augmented generation"`, skills.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "arxiv:2504.00112", got[0].ID)
}

// TestImportCommandReadsEveryFormat imports a BibTeX file (detected from
// content though named .txt), a Scopus-style CSV whose title column is
// mapped by hand, and a MEDLINE file, into one library.
func TestImportCommandReadsEveryFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	files := map[string]string{
		"refs.txt":    "% exported by JabRef\n@article{smith2019,\n  title = {Caf{\\'e} culture and {DNA} repair},\n  author = {Smith, John and M{\\\"u}ller, Ana},\n  year = 2019,\n  doi = {10.1000/cafe}\n}\n\n@article{broken,\n  author = {Nobody}\n}\n",
		"scopus.csv":  "Heading,Authors,Year,DOI\nSleep and memory,\"Lee C.; Kim D.\",2020,10.1000/sleep\n",
		"pubmed.nbib": "PMID- 31234567\nTI  - Exercise for depression in older adults.\nFAU - Okafor, Ngozi\nDP  - 2019 May\n\n",
	}
	var paths []string
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		paths = append(paths, p)
	}
	var out bytes.Buffer
	args := append([]string{"import", "--db", db, "--column", "title=Heading"}, paths...)
	require.NoError(t, run(ctx, args, func(string) string { return "" }, &out))
	require.Contains(t, out.String(), "refs.txt:9: missing title")
	require.Regexp(t, `(?m)^imported 3 new, 0 updated, 1 skipped \(1 missing title\) in [0-9.]+ s$`, out.String())

	st, err := store.Open(ctx, db, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	got, err := st.SearchLibrary(ctx, `"culture"`, skills.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "Café culture and DNA repair", got[0].Title, "LaTeX accents and protective braces decoded")
	require.Equal(t, []string{"John Smith", "Ana Müller"}, got[0].Authors)
	got, err = st.SearchLibrary(ctx, `"sleep"`, skills.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "doi:10.1000/sleep", got[0].ID)
	got, err = st.SearchLibrary(ctx, `"depression"`, skills.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "31234567", got[0].PMID)
}

func TestImportCommandRejectsBadInvocations(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "q.db")
	for name, args := range map[string][]string{
		"NoFiles":       {"import", "--db", db},
		"UnknownFormat": {"import", "--db", db, "--format", "docx", "x.docx"},
		"MissingFile":   {"import", "--db", db, filepath.Join(t.TempDir(), "nope.jsonl")},
		"Unrecognised":  {"import", "--db", db, "import.go"},
		"UnknownFlag":   {"import", "--nope"},
		"BadColumn":     {"import", "--db", db, "--column", "title", "x.csv"},
		"UnknownField":  {"import", "--db", db, "--column", "colour=Colour", "x.csv"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, &out)
			require.Equal(t, engine.EInvalid, engine.ErrorCode(err), "%v", err)
		})
	}
}
