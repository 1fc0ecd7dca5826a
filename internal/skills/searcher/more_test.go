package searcher_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
)

// pagedSource is a sources.Counter that serves a query's matches page by
// page from req.Offset, and records the offsets it was asked for.
type pagedSource struct {
	name  string
	total map[string]int
	mu    *sync.Mutex
	asked *[]string
}

func (s pagedSource) Name() string { return s.name }

func (s pagedSource) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

func (s pagedSource) SearchCounted(_ context.Context, req sources.SourceRequest) (sources.Page, error) {
	s.mu.Lock()
	*s.asked = append(*s.asked, fmt.Sprintf("%s@%d", req.Query, req.Offset))
	s.mu.Unlock()
	n := s.total[req.Query]
	var out []research.RawPaper
	for i := req.Offset; i < min(n, req.Offset+req.MaxResults); i++ {
		out = append(out, research.RawPaper{Title: fmt.Sprintf("%s %d", req.Query, i), DOI: fmt.Sprintf("10.1/%s.%d", req.Query, i)})
	}
	return sources.Page{Papers: out, Total: n}, nil
}

// TestSearchMore checks "Show more" asks only the queries that have more
// for the records after those fetched, ranks them after the first page,
// and that WithPage makes the counts say what was fetched: "25 shown of
// 49 found", then "49 found" over 2 pages, never more shown than found.
func TestSearchMore(t *testing.T) {
	t.Parallel()
	var asked []string
	src := pagedSource{name: "local", total: map[string]int{"sleep": 49, "raft": 10}, mu: &sync.Mutex{}, asked: &asked}
	other := echoSource("crossref")
	s := newSearcher(t, searcher.Options{}, src, other)
	st := strategy([]string{"local", "crossref"}, q("sleep"), q("raft"))
	st.MaxResultsPerSource = 25
	first, err := s.Search(context.Background(), st)
	require.NoError(t, err)
	local := first.Sources["local"]
	require.Equal(t, "35 shown of up to 59 found", local.Found().String())
	require.True(t, local.HasMore())
	require.False(t, first.Sources["crossref"].HasMore(), "a source that cannot tell has no next page")

	asked = nil
	page, err := s.SearchMore(context.Background(), st, first.Sources)
	require.NoError(t, err)
	require.Equal(t, []string{"sleep@25"}, asked, "only the query with more is asked, from where it stopped")
	require.NotContains(t, page.Sources, "crossref", "a source with nothing more is not asked")
	require.Len(t, page.Papers, 24)
	require.Equal(t, "sleep 25", page.Papers[0].Title)
	require.Equal(t, 26, page.Papers[0].Rank)
	merged := local.WithPage(page.Sources["local"])
	require.Equal(t, []research.QueryResult{{Count: 49, Total: 49, Fetched: 49, Pages: 2}, {Count: 10, Total: 10}}, merged.QueryResults)
	require.Equal(t, 59, merged.Count)
	require.Equal(t, "59 found", merged.Found().String())
	require.False(t, merged.HasMore())
	require.Equal(t, 2, merged.Pages())
	require.LessOrEqual(t, merged.Found().Shown, max(merged.Found().Total, merged.Found().Shown))

	asked = nil
	none, err := s.SearchMore(context.Background(), st, map[string]research.SourceResult{"local": merged})
	require.NoError(t, err)
	require.Empty(t, asked)
	require.Empty(t, none.Papers)
}
