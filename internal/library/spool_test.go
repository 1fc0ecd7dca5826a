package library_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
)

// TestSpoolDir: uploads are spooled into the directory Quarry owns, a
// restart (UseSpoolDir) removes what a killed import left there, and an
// import removes its spooled file when it ends, refused or done. On
// b42018a uploads went to quarry-upload-* files in the system's temporary
// directory that nothing removed after a kill (the second defect).
func TestSpoolDir(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	dir := filepath.Join(t.TempDir(), "q.db-uploads")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	left := filepath.Join(dir, "quarry-upload-123")
	require.NoError(t, os.WriteFile(left, []byte("TY  - JOUR\n"), 0o600))
	other := filepath.Join(dir, "keep.txt")
	require.NoError(t, os.WriteFile(other, nil, 0o600))

	jobs := library.NewJobs(context.Background(), st)
	removed, err := jobs.UseSpoolDir(dir)
	require.NoError(t, err)
	require.Equal(t, 1, removed)
	require.NoFileExists(t, left, "a killed import's upload is removed at start")
	require.FileExists(t, other, "only spooled uploads are removed")

	path, err := jobs.Spool(strings.NewReader("TY  - JOUR\nTI  - Spooled\nPY  - 2020\nER  - \n"))
	require.NoError(t, err)
	require.Equal(t, dir, filepath.Dir(path))
	_, err = jobs.Start(path, "up.ris", library.Importer{By: "Ada"}, codecs.Options{}, true)
	require.NoError(t, err)
	jobs.Wait()
	require.NoFileExists(t, path, "a finished import removes its upload")

	path, err = jobs.Spool(strings.NewReader("just prose\n"))
	require.NoError(t, err)
	_, err = jobs.Start(path, "notes.txt", library.Importer{By: "Ada"}, codecs.Options{}, true)
	require.Error(t, err)
	require.NoFileExists(t, path, "a refused import removes its upload")
}
