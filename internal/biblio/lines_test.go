package biblio_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

func TestLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100<<10)
	in := "\ufeffTY  - JOUR\r\nAU  - M\xfcller, J\xf6rg\n\n" + long + "\nlast"
	l := biblio.NewLines(strings.NewReader(in))
	var got []string
	var nums []int
	for {
		s, ok, err := l.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, s)
		nums = append(nums, l.Number())
		if s == "" && len(got) == 3 {
			l.Unread(s) // pushed back once: read again with the same number
			s2, ok, err := l.Next()
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, s, s2)
			require.Equal(t, 3, l.Number())
		}
	}
	require.Equal(t, []string{"TY  - JOUR", "AU  - Müller, Jörg", "", long, "last"}, got, "BOM and CRLF removed, Latin-1 decoded, long lines whole")
	require.Equal(t, []int{1, 2, 3, 4, 5}, nums)
}
