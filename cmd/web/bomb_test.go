package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"quarry/internal/biblio/biblitest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportCommandRefusesGzipBomb: `quarry import` of a gzip bomb (one
// RIS line of 100 MiB of 'a', ~100 KiB gzipped) fails with exit status 1
// and a message naming the decompression limit, and the limit follows
// QUARRY_IMPORT_GZIP_FLOOR_MB. On b42018a it read the whole line.
func TestImportCommandRefusesGzipBomb(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.ris.gz")
	var buf bytes.Buffer
	biblitest.GzipBomb(t, &buf, 100<<20, gzip.DefaultCompression)
	require.NoError(t, os.WriteFile(bomb, buf.Bytes(), 0o644))

	for name, env := range map[string]map[string]string{
		"Default":    nil,
		"LowerFloor": {"QUARRY_IMPORT_GZIP_FLOOR_MB": "8"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := []string{"import", "--db", filepath.Join(t.TempDir(), "q.db"), bomb}
			err := run(context.Background(), args, func(k string) string { return env[k] }, nil, io.Discard, io.Discard)
			var stderr bytes.Buffer
			require.Equal(t, 1, exitCode(err, &stderr))
			require.Contains(t, stderr.String(), "more than 100 times its compressed size")
			want := "64 MiB for any file"
			if name == "LowerFloor" {
				want = "8 MiB for any file"
			}
			require.Contains(t, stderr.String(), want)
		})
	}
}
