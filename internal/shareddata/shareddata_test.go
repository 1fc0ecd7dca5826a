package shareddata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDirFindsSharedBesideTheRepository(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "clone")
	pkg := filepath.Join(repo, "internal", "x")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "shared", "data", "screening"), 0o755))
	t.Chdir(pkg)
	t.Setenv(EnvVar, "")

	require.Equal(t, filepath.Join(base, "shared", "data", "screening"), Dir("screening"))

	t.Setenv(EnvVar, "/elsewhere")
	require.Equal(t, filepath.Join("/elsewhere", "corpus"), Dir("corpus"))
}

func TestDirFallsBackWhenNothingIsBeside(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644))
	t.Chdir(repo)
	t.Setenv(EnvVar, "")
	require.Equal(t, filepath.Join("/work/shared/data", "dedup"), Dir("dedup"))
}
