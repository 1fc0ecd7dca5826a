package biblitest

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repeat is n bytes of c, made as they are read.
type repeat struct {
	c byte
	n int64
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	for i := range p {
		p[i] = r.c
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// Repeat is n bytes of c, made as they are read: a test input of any size
// (a gigabyte line, gigabytes of newlines) that the test itself never holds.
func Repeat(c byte, n int64) io.Reader { return &repeat{c: c, n: n} }

// GzipBomb writes to w, gzipped at level, one RIS record whose abstract is
// a single line of n bytes of 'a': the decompression bomb the import limits
// are there for, at whatever size a test or benchmark can afford.
func GzipBomb(tb testing.TB, w io.Writer, n int64, level int) {
	tb.Helper()
	zw, err := gzip.NewWriterLevel(w, level)
	require.NoError(tb, err)
	_, err = io.Copy(zw, io.MultiReader(strings.NewReader("TY  - JOUR\nTI  - Bomb\nAB  - "), Repeat('a', n), strings.NewReader("\nER  - \n")))
	require.NoError(tb, err)
	require.NoError(tb, zw.Close())
}
