package views_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

// TestPagerSummary: where a page is in its list, with thousands grouped,
// an empty page, and a total that is only a lower bound.
func TestPagerSummary(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		p    views.Pager
		want string
	}{
		{views.Pager{Noun: "runs", From: 1, To: 25, Total: 312, Exact: true}, "runs 1–25 of 312"},
		{views.Pager{Noun: "papers", From: 74701, To: 74728, Total: 74728, Exact: true}, "papers 74,701–74,728 of 74,728"},
		{views.Pager{Noun: "papers", From: 1, To: 50, Total: 10000}, "papers 1–50 of more than 10,000"},
		{views.Pager{Noun: "runs", Total: 0, Exact: true}, "no runs on this page (0 in all)"},
		{views.Pager{Noun: "papers", Total: 1234567, Exact: true}, "no papers on this page (1,234,567 in all)"},
	} {
		require.Equal(t, tt.want, tt.p.Summary())
	}
	require.Equal(t, "/library/papers/doi:10.1093%2Fsleep%2F26.2.117", views.PaperURL("doi:10.1093/sleep/26.2.117"))
	require.Equal(t, "/library/papers/t:a%20b%3Fc%23d", views.PaperURL("t:a b?c#d"))
}
