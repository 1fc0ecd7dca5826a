package handlers

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPagerLinks: next while a full page may have more after it, previous
// to the page before, and past the end to the last page there is; a total
// that is only a lower bound (a search counted to its cap) never hides
// the pages after it.
func TestPagerLinks(t *testing.T) {
	t.Parallel()
	q := url.Values{"q": {"sleep"}}
	for _, tt := range []struct {
		name           string
		page, n, total int
		exact          bool
		from, to       int
		prev, next     string
	}{
		{"First", 1, 50, 121, true, 1, 50, "", "/library?page=2&q=sleep"},
		{"Last", 3, 21, 121, true, 101, 121, "/library?page=2&q=sleep", ""},
		{"ExactlyFull", 2, 50, 100, true, 51, 100, "/library?q=sleep", ""},
		{"PastTheEnd", 9, 0, 121, true, 0, 0, "/library?page=3&q=sleep", ""},
		{"Empty", 1, 0, 0, true, 0, 0, "", ""},
		{"BeyondTheCount", 250, 50, 10000, false, 12451, 12500, "/library?page=249&q=sleep", "/library?page=251&q=sleep"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := pager("papers", "/library", q, tt.page, 50, tt.n, tt.total, tt.exact)
			require.Equal(t, tt.from, p.From)
			require.Equal(t, tt.to, p.To)
			require.Equal(t, tt.prev, p.Prev)
			require.Equal(t, tt.next, p.Next)
		})
	}
}
