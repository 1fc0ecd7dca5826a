package main

import (
	"bytes"
	"context"
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

func TestImportCommandRejectsBadInvocations(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "q.db")
	for name, args := range map[string][]string{
		"NoFiles":       {"import", "--db", db},
		"UnknownFormat": {"import", "--db", db, "--format", "docx", "x.docx"},
		"MissingFile":   {"import", "--db", db, filepath.Join(t.TempDir(), "nope.jsonl")},
		"NotJSONL":      {"import", "--db", db, "import.go"},
		"UnknownFlag":   {"import", "--nope"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := run(context.Background(), args, func(string) string { return "" }, &out)
			require.Equal(t, engine.EInvalid, engine.ErrorCode(err), "%v", err)
		})
	}
}
