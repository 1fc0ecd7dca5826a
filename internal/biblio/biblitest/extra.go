package biblitest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

// ExtraRoundTrip reads n files made of random sequences of parts (tag
// lines of the format, in any order), writes what it read and reads that
// back: the names' split and every Extra field (publisher, editors, the
// format's own kept tags, ...) must come back unchanged, so an export
// re-imports without loss. The sequence is seeded: a failure repeats.
func (f Format) ExtraRoundTrip(t *testing.T, parts []string, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		var b strings.Builder
		for range r.IntN(25) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		in := b.String()
		var good []biblio.Record
		for _, rec := range f.Read(t, []byte(in)) {
			if rec.Problem == "" {
				good = append(good, rec)
			}
		}
		out := f.Write(t, good)
		back := f.Read(t, out)
		require.Len(t, back, len(good), "%q", in)
		for k := range good {
			require.Equal(t, biblio.ExtraFields(good[k]), biblio.ExtraFields(back[k]), "read %q, wrote\n%s", in, out)
			require.Equal(t, biblio.NamesOf(good[k]), biblio.NamesOf(back[k]), "read %q, wrote\n%s", in, out)
		}
	}
}
