package local_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/embed/embedtest"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

// hybridFixture is rankFixture's library in a store of its own, with the
// fake embeddings server; embedded says whether the papers get vectors.
func hybridFixture(t *testing.T, embedded bool, papers ...research.RawPaper) (*store.Store, *embedtest.Server, *embed.Client) {
	t.Helper()
	ctx := context.Background()
	st := rankLibrary(t, papers...)
	srv := embedtest.NewServer(t)
	emb, err := embed.New(embed.Config{Provider: embed.ProviderOpenAI, BaseURL: srv.URL, Model: "fake"}, embed.WithoutBackoff())
	require.NoError(t, err)
	if embedded {
		job := library.NewEmbedding(st, emb, library.EmbeddingOptions{Idle: time.Hour})
		jctx, stop := context.WithCancel(ctx)
		job.Start(jctx)
		deadline := time.Now().Add(20 * time.Second)
		for s := job.Status(); s.Papers == 0 || s.Embedded < s.Papers; s = job.Status() {
			require.True(t, time.Now().Before(deadline), "embedding the fixture timed out")
			time.Sleep(5 * time.Millisecond)
		}
		stop()
		job.Wait()
	}
	return st, srv, emb
}

var carPapers = []research.RawPaper{
	{Title: "Cars and urban emissions", Abstract: "Emissions of cars in cities.", Year: 2015},
	// Shares no word with "cars": the fake embeds automobile and vehicle
	// as car, as a real model places them near each other.
	{Title: "Automobile crash tests", Abstract: "Vehicle safety ratings.", Year: 2016},
}

// TestHybridFindsByMeaning: with vectors, a paper that shares no word with
// the query but means the same is found beside the word matches; the
// word ranking alone misses it.
func TestHybridFindsByMeaning(t *testing.T) {
	t.Parallel()
	st, _, emb := hybridFixture(t, true, carPapers...)
	req := sources.SourceRequest{Query: render(t, `cars`), MaxResults: 3}
	words, err := local.New(st)
	require.NoError(t, err)
	require.Equal(t, []string{"Cars and urban emissions"}, titles(t, words, req))
	sem := library.NewSemantic(st, emb)
	require.NoError(t, sem.Load(context.Background()))
	hybrid, err := local.New(st, local.WithSemantic(sem))
	require.NoError(t, err)
	got := titles(t, hybrid, req)
	require.Len(t, got, 3)
	require.ElementsMatch(t, []string{"Cars and urban emissions", "Automobile crash tests"}, got[:2],
		"first in both lists, and first in the nearest list, fuse to the top two")

	// An excluded term keeps its papers out of the nearest list too.
	got = titles(t, hybrid, sources.SourceRequest{Query: render(t, `cars -crash`), MaxResults: 50})
	require.NotContains(t, got, "Automobile crash tests")
	// So do the years.
	got = titles(t, hybrid, sources.SourceRequest{Query: render(t, `cars`), MaxResults: 50, YearRange: research.YearRange{To: 2015}})
	require.NotContains(t, got, "Automobile crash tests")
	// Pages of a hybrid search neither repeat nor skip a paper.
	seen := map[string]bool{}
	var all []string
	for off := 0; off < 60; off += 7 {
		page, err := hybrid.Search(context.Background(), sources.SourceRequest{Query: render(t, `cars`), MaxResults: 7, Offset: off})
		require.NoError(t, err)
		for _, p := range page {
			require.False(t, seen[p.ID], "%s on two pages", p.Title)
			seen[p.ID] = true
			all = append(all, p.Title)
		}
	}
	require.Equal(t, titles(t, hybrid, sources.SourceRequest{Query: render(t, `cars`), MaxResults: 100}), all)
}

// TestHybridWithoutVectorsChangesNothing: with no provider, no vectors yet,
// or an embeddings server that fails, every page is exactly the word
// ranking's, papers, ranks and totals alike.
func TestHybridWithoutVectorsChangesNothing(t *testing.T) {
	t.Parallel()
	papers := append([]research.RawPaper{
		{Title: "Statins in older adults", Abstract: "Cardiovascular prevention with statins.", Year: 2015},
		{Title: "Statins in mice", Abstract: "Statins and cholesterol in an animal model.", Year: 2016},
	}, carPapers...)
	reqs := []sources.SourceRequest{
		{Query: render(t, `cars`), MaxResults: 10},
		{Query: render(t, `statins -mice`), MaxResults: 10},
		{Query: render(t, `statins OR cars OR study`), MaxResults: 5, Offset: 3, YearRange: research.YearRange{From: 2005}},
		{Query: render(t, `"river basins" soil`), MaxResults: 20, QuestionWords: []string{"erosion", "sediment"}},
	}
	st, srv, emb := hybridFixture(t, false, papers...)
	plain, err := local.New(st)
	require.NoError(t, err)
	noVectors, err := local.New(st, local.WithSemantic(library.NewSemantic(st, emb)))
	require.NoError(t, err)
	ctx := context.Background()
	stEmb, srvDown, embDown := hybridFixture(t, true, papers...)
	srvDown.Fail = func(int) int { return http.StatusServiceUnavailable }
	plainEmb, err := local.New(stEmb)
	require.NoError(t, err)
	semDown := library.NewSemantic(stEmb, embDown)
	require.NoError(t, semDown.Load(ctx))
	down, err := local.New(stEmb, local.WithSemantic(semDown))
	require.NoError(t, err)
	for _, req := range reqs {
		want, err := plain.SearchCounted(ctx, req)
		require.NoError(t, err)
		got, err := noVectors.SearchCounted(ctx, req)
		require.NoError(t, err)
		require.Equal(t, want, got, "no vectors yet: %s", req.Query)
		want, err = plainEmb.SearchCounted(ctx, req)
		require.NoError(t, err)
		got, err = down.SearchCounted(ctx, req)
		require.NoError(t, err)
		require.Equal(t, want, got, "server down: %s", req.Query)
	}
	require.Zero(t, srv.Requests(), "with no vectors, the question is not even embedded")
}
