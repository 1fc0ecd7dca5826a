package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/simplifiedchinese"

	"quarry/internal/research"
	"quarry/internal/store"
)

// TestImportCommandEncodings: a GBK BibTeX file imports with its Chinese
// title whether the encoding is detected or named with --encoding (it
// read "¿­Èö" for 凯撒), a Web of Science plain-text export imports, and
// an unknown encoding is refused before anything is written.
func TestImportCommandEncodings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	bib := "@article{kaisa2020,\n  title = {凯撒密码在古典密码学中的应用研究},\n  author = {张伟 and 李娜},\n  journal = {计算机科学与技术学报},\n  year = {2020}\n}\n"
	gbk, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(bib))
	require.NoError(t, err)
	gbkPath := filepath.Join(dir, "gbk.bib")
	require.NoError(t, os.WriteFile(gbkPath, gbk, 0o644))
	wosPath := filepath.Join(dir, "savedrecs.txt")
	require.NoError(t, os.WriteFile(wosPath, []byte("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Doe, J\nAF Doe, Jane\nTI Web of Science plain text imports\nSO JOURNAL\nPY 2021\nDI 10.1000/wos\nER\n\nEF\n"), 0o644))

	var out bytes.Buffer
	require.Error(t, run(ctx, []string{"import", "--db", db, "--encoding", "klingon", gbkPath}, func(string) string { return "" }, nil, &out, io.Discard))
	_, err = os.Stat(db)
	require.True(t, os.IsNotExist(err), "nothing is created for a bad invocation")

	env := dbGetenv(t, db)

	require.NoError(t, run(ctx, []string{"import", "--db", db, gbkPath, wosPath}, env, nil, &out, io.Discard))
	require.NoError(t, run(ctx, []string{"import", "--db", db, "--encoding", "gbk", gbkPath}, env, nil, &out, io.Discard))
	st, err := openStore(t, ctx, db)
	require.NoError(t, err)
	defer st.Close()
	got, err := st.SearchLibrary(ctx, `"JOURNAL"`, research.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "doi:10.1000/wos", got[0].ID)
	require.Equal(t, []string{"Jane Doe"}, got[0].Authors)
	var titles []string
	require.NoError(t, st.EachLibraryPaper(ctx, func(p store.LibraryPaper) error {
		titles = append(titles, p.Title)
		return nil
	}))
	require.Contains(t, titles, "凯撒密码在古典密码学中的应用研究")
	require.Len(t, titles, 2, "the second import of the same file updates it")
}
