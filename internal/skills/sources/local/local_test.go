package local_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

func setup(t *testing.T) (*local.Source, map[string]string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "lib.db"), store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	papers := []research.RawPaper{
		{Title: "Machine learning for early sepsis detection", Abstract: "Septic shock in adults.", Year: 2021, DOI: "10.1/s1", Authors: []string{"A. Author"}},
		{Title: "Sepsis in mice", Abstract: "An animal model of sepsis and machine learning.", Year: 2020, DOI: "10.1/s2"},
		{Title: "Deep learning review", Abstract: "Includes sepsis among many tasks of machine learning.", Year: 2015, DOI: "10.1/s3"},
		{Title: "Gaussian splatting", Abstract: "Rendering.", Year: 2024, ArxivID: "2401.00001"},
	}
	ids := map[string]string{}
	i := 0
	_, err = library.Import(ctx, st, func() (library.Record, error) {
		if i == len(papers) {
			return library.Record{}, io.EOF
		}
		p := papers[i]
		p.ID = research.StableID(p)
		ids[p.Title] = p.ID
		i++
		return library.Record{Line: i, Paper: p, Origin: "fixture"}, nil
	}, library.ImportOptions{})
	require.NoError(t, err)
	src, err := local.New(st)
	require.NoError(t, err)
	return src, ids
}

func render(t *testing.T, text string) string {
	t.Helper()
	q, err := query.Parse(text)
	require.NoError(t, err)
	return query.RenderAll(q, []string{query.Local})[query.Local]
}

func TestSearch(t *testing.T) {
	t.Parallel()
	src, ids := setup(t)
	require.Equal(t, research.SourceLocal, src.Name())
	tests := []struct {
		name  string
		query string
		years research.YearRange
		max   int
		want  []string
	}{
		{"RankedTitleFirst", `sepsis "machine learning"`, research.YearRange{}, 10,
			[]string{"Machine learning for early sepsis detection", "Sepsis in mice", "Deep learning review"}},
		{"Exclusion", `sepsis -mice`, research.YearRange{}, 10,
			[]string{"Machine learning for early sepsis detection", "Deep learning review"}},
		// "sepsis" twice in a short record outranks it once in a longer title.
		{"Years", `sepsis`, research.YearRange{From: 2016}, 10,
			[]string{"Sepsis in mice", "Machine learning for early sepsis detection"}},
		{"MaxResults", `sepsis "machine learning"`, research.YearRange{}, 1,
			[]string{"Machine learning for early sepsis detection"}},
		// Every word is literal, and a ranked search finds the paper that
		// matches one of the three.
		{"SyntaxCharactersAreLiteral", `splatting NEAR title:x*`, research.YearRange{}, 10, []string{"Gaussian splatting"}},
		{"Nothing", `zebrafish`, research.YearRange{}, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := src.Search(context.Background(), sources.SourceRequest{Query: render(t, tt.query), YearRange: tt.years, MaxResults: tt.max})
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for i, p := range got {
				require.Equal(t, ids[tt.want[i]], p.ID)
				require.Equal(t, tt.want[i], p.Title)
				require.Equal(t, research.SourceLocal, p.Source)
				require.Equal(t, i+1, p.Rank)
				require.NoError(t, p.Validate())
			}
		})
	}
}

func TestSearchRejectsBadRequests(t *testing.T) {
	t.Parallel()
	src, _ := setup(t)
	for name, req := range map[string]sources.SourceRequest{
		"EmptyQuery":    {Query: "  ", MaxResults: 10},
		"NoMaxResults":  {Query: `"sepsis"`},
		"BrokenFTS":     {Query: `"sepsis`, MaxResults: 10},
		"DanglingOpAND": {Query: `sepsis AND`, MaxResults: 10},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := src.Search(context.Background(), req)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
		})
	}
}

func TestNewNeedsALibrary(t *testing.T) {
	t.Parallel()
	_, err := local.New(nil)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

// TestSearchCountedSaysHowManyMatch is defect 7 of issue 16 at its root:
// the library's count of a match beyond the limit, so "1 found" is never
// read as all there is. Years narrow the count as they narrow the search.
func TestSearchCountedSaysHowManyMatch(t *testing.T) {
	t.Parallel()
	src, _ := setup(t)
	tests := []struct {
		name         string
		query        string
		years        research.YearRange
		max          int
		shown, total int
	}{
		{"Capped", `sepsis`, research.YearRange{}, 1, 1, 3},
		{"CappedInYears", `sepsis`, research.YearRange{From: 2016}, 1, 1, 2},
		{"AllShown", `sepsis`, research.YearRange{}, 10, 3, 3},
		{"Nothing", `zebrafish`, research.YearRange{}, 10, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			page, err := src.SearchCounted(context.Background(), sources.SourceRequest{Query: render(t, tt.query), YearRange: tt.years, MaxResults: tt.max})
			require.NoError(t, err)
			require.Len(t, page.Papers, tt.shown)
			require.Equal(t, tt.total, page.Total)
		})
	}
}

// TestNextPage checks a next page ("Show more") of the library: the
// papers after the first page's, none repeated or skipped, with the same
// total, and an empty page past the end.
func TestNextPage(t *testing.T) {
	t.Parallel()
	src, _ := setup(t)
	ctx := context.Background()
	q := render(t, "sepsis")
	all, err := src.SearchCounted(ctx, sources.SourceRequest{Query: q, MaxResults: 10})
	require.NoError(t, err)
	require.Len(t, all.Papers, 3)
	first, err := src.SearchCounted(ctx, sources.SourceRequest{Query: q, MaxResults: 2})
	require.NoError(t, err)
	require.Equal(t, 3, first.Total)
	next, err := src.SearchCounted(ctx, sources.SourceRequest{Query: q, MaxResults: 2, Offset: 2})
	require.NoError(t, err)
	require.Len(t, next.Papers, 1)
	require.Equal(t, 3, next.Total, "a short last page still says the total")
	require.Equal(t, all.Papers[2].Title, next.Papers[0].Title)
	require.Equal(t, []string{all.Papers[0].Title, all.Papers[1].Title}, []string{first.Papers[0].Title, first.Papers[1].Title})
	past, err := src.SearchCounted(ctx, sources.SourceRequest{Query: q, MaxResults: 2, Offset: 4})
	require.NoError(t, err)
	require.Empty(t, past.Papers)
	_, err = src.SearchCounted(ctx, sources.SourceRequest{Query: q, MaxResults: 2, Offset: -1})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}
