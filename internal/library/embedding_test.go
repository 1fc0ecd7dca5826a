package library_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/embed/embedtest"
	"quarry/internal/store"
)

// papersStream yields n numbered papers, then io.EOF.
func papersStream(titles ...string) library.Next {
	i := 0
	return func() (library.Record, error) {
		if i == len(titles) {
			return library.Record{}, io.EOF
		}
		i++
		p := research.RawPaper{Title: titles[i-1], Abstract: "An abstract about " + titles[i-1] + ".", Year: 2000 + i, DOI: fmt.Sprintf("10.1/%d", i)}
		p.ID = research.StableID(p)
		return library.Record{Paper: p, Origin: "t.jsonl", Line: i}, nil
	}
}

func fakeEmbedder(t *testing.T, srv *embedtest.Server, batch int) *embed.Client {
	t.Helper()
	c, err := embed.New(embed.Config{Provider: embed.ProviderOpenAI, BaseURL: srv.URL, Model: "fake-64", Batch: batch}, embed.WithoutBackoff())
	require.NoError(t, err)
	return c
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func importTitles(t *testing.T, st *store.Store, n int) {
	t.Helper()
	titles := make([]string, n)
	for i := range titles {
		titles[i] = fmt.Sprintf("Paper number %d on topic%d", i, i%7)
	}
	_, err := library.Import(context.Background(), st, papersStream(titles...), library.ImportOptions{})
	require.NoError(t, err)
}

// TestEmbeddingEmbedsTheLibraryAndReportsProgress: the job embeds every
// paper in batches, bounded to its workers, says how far it has come, and
// a paper imported later is embedded once the job is kicked.
func TestEmbeddingEmbedsTheLibraryAndReportsProgress(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	importTitles(t, st, 50)
	srv := embedtest.NewServer(t)
	job := library.NewEmbedding(st, fakeEmbedder(t, srv, 8), library.EmbeddingOptions{Batch: 8, Workers: 2, Idle: time.Hour})
	require.Equal(t, library.EmbeddingStatus{Model: "fake-64"}, job.Status())
	ctx, stop := context.WithCancel(context.Background())
	job.Start(ctx)
	t.Cleanup(func() { stop(); job.Wait() })
	waitFor(t, "every paper embedded", func() bool {
		s := job.Status()
		return s.Embedded == 50 && !s.Running
	})
	s := job.Status()
	require.Equal(t, 50, s.Papers)
	require.Zero(t, s.Errors)
	require.Equal(t, 7, srv.Requests(), "50 papers in batches of 8")
	set, err := st.LibraryVectors(context.Background(), "fake-64", 0)
	require.NoError(t, err)
	require.Equal(t, embedtest.Dim, set.Dim)
	require.Len(t, set.Docs, 50)

	importTitles(t, st, 55) // five more
	job.Kick()
	waitFor(t, "the new papers embedded", func() bool { return job.Status().Embedded == 55 })
	require.Equal(t, 55, srv.Texts(), "only the new papers were sent")
}

// TestEmbeddingResumesAfterRestartAndStopsCleanly: a job stopped mid-way
// (its context cancelled, as at shutdown) returns, and a new job over the
// same database embeds only what is still missing.
func TestEmbeddingResumesAfterRestartAndStopsCleanly(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	importTitles(t, st, 40)
	srv := embedtest.NewServer(t)
	release := make(chan struct{})
	stopAfter := 2
	srv.Fail = func(n int) int {
		if n > stopAfter {
			<-release // hang until the test lets go: the job is stopped mid-request
		}
		return 0
	}
	ctx, stop := context.WithCancel(context.Background())
	first := library.NewEmbedding(st, fakeEmbedder(t, srv, 10), library.EmbeddingOptions{Batch: 10, Workers: 1, Idle: time.Hour})
	first.Start(ctx)
	waitFor(t, "two batches stored", func() bool { return first.Status().Embedded == 20 })
	waitFor(t, "the third request sent", func() bool { return srv.Requests() == 3 })
	stop()
	done := make(chan struct{})
	go func() { first.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not stop when its context was cancelled")
	}
	close(release)
	require.Zero(t, first.Status().Errors, "stopping is not an error")
	c, err := st.CountVectors(context.Background(), "fake-64")
	require.NoError(t, err)
	require.Equal(t, 20, c.Embedded, "the batch in flight was abandoned")

	waitFor(t, "the abandoned request answered", func() bool { return srv.Texts() == 30 })
	sentBefore := srv.Texts()
	second := library.NewEmbedding(st, fakeEmbedder(t, srv, 10), library.EmbeddingOptions{Batch: 10, Workers: 1, Idle: time.Hour})
	ctx2, stop2 := context.WithCancel(context.Background())
	second.Start(ctx2)
	t.Cleanup(func() { stop2(); second.Wait() })
	waitFor(t, "the rest embedded", func() bool { return second.Status().Embedded == 40 })
	require.Equal(t, 20, srv.Texts()-sentBefore, "the restart embedded only the missing 20 papers")
}

// TestEmbeddingReportsErrorsAndRetries: a server that fails shows on the
// status (count and message) and the job tries again after its pause.
func TestEmbeddingReportsErrorsAndRetries(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	importTitles(t, st, 5)
	srv := embedtest.NewServer(t)
	srv.Fail = func(n int) int {
		if n == 1 {
			return http.StatusUnauthorized
		}
		return 0
	}
	job := library.NewEmbedding(st, fakeEmbedder(t, srv, 10), library.EmbeddingOptions{Pause: 10 * time.Millisecond, Idle: time.Hour})
	ctx, stop := context.WithCancel(context.Background())
	job.Start(ctx)
	t.Cleanup(func() { stop(); job.Wait() })
	waitFor(t, "embedded after the failure", func() bool { return job.Status().Embedded == 5 })
	s := job.Status()
	require.Equal(t, 1, s.Errors)
	require.Contains(t, s.LastError, "401")
	require.False(t, s.LastErrorAt.IsZero())
}

// TestSemanticNearest finds by meaning what shares no word with the
// question (the fake folds "automobile" and "cars" together), keeps the
// year range, and sees vectors stored after its first read once the
// reload interval has passed.
func TestSemanticNearest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	_, err := library.Import(ctx, st, papersStream("Cars in cities", "Protein folding", "Heart surgery outcomes"), library.ImportOptions{})
	require.NoError(t, err)
	srv := embedtest.NewServer(t)
	emb := fakeEmbedder(t, srv, 10)
	sem := library.NewSemantic(st, emb)

	got, err := sem.Nearest(ctx, "automobile", research.YearRange{}, 5)
	require.NoError(t, err)
	require.Empty(t, got, "no vectors yet: nothing, and no error")

	job := library.NewEmbedding(st, emb, library.EmbeddingOptions{Idle: time.Hour})
	jctx, stop := context.WithCancel(ctx)
	job.Start(jctx)
	t.Cleanup(func() { stop(); job.Wait() })
	waitFor(t, "embedded", func() bool { return job.Status().Embedded == 3 })

	require.NoError(t, sem.Load(ctx))
	got, err = sem.Nearest(ctx, "automobile", research.YearRange{}, 1)
	require.NoError(t, err)
	papers, err := st.LibraryPapersByDoc(ctx, got)
	require.NoError(t, err)
	require.Equal(t, "Cars in cities", papers[0].Title)

	got, err = sem.Nearest(ctx, "automobile", research.YearRange{From: 2002}, 3)
	require.NoError(t, err)
	papers, err = st.LibraryPapersByDoc(ctx, got)
	require.NoError(t, err)
	require.Len(t, papers, 2, "the 2001 paper is outside the years")
	require.NotEqual(t, "Cars in cities", papers[0].Title)
	// A search of a project's library selection finds its papers alone,
	// the nearest of them first.
	now := time.Now().UTC()
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "ann", Email: "ann@example.org", Name: "Ann", CreatedAt: now}))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "pa", Name: "A", CreatedAt: now}, "ann"))
	all, err := st.LibraryPapersByDoc(ctx, []int64{1, 2, 3})
	require.NoError(t, err)
	var others []string
	for _, p := range all {
		if p.Title != "Cars in cities" {
			others = append(others, p.ID)
		}
	}
	_, err = st.SelectPapers(ctx, "pa", "Ann", others)
	require.NoError(t, err)
	got, err = sem.Nearest(research.WithLibrarySelection(ctx, "pa"), "automobile", research.YearRange{}, 3)
	require.NoError(t, err)
	papers, err = st.LibraryPapersByDoc(ctx, got)
	require.NoError(t, err)
	require.Len(t, papers, 2, "the nearest paper is not in the selection")
	for _, p := range papers {
		require.Contains(t, others, p.ID)
	}
	requests := srv.Requests()
	_, err = sem.Nearest(ctx, "automobile", research.YearRange{}, 1)
	require.NoError(t, err)
	require.Equal(t, requests, srv.Requests(), "a question's vector is asked once")

	// A search never waits for the vectors to be read: the first one
	// answers without them and starts reading them.
	fresh := library.NewSemantic(st, emb)
	got, err = fresh.Nearest(ctx, "automobile", research.YearRange{}, 1)
	require.NoError(t, err)
	require.Empty(t, got)
	waitFor(t, "the vectors read in the background", func() bool {
		got, err := fresh.Nearest(ctx, "automobile", research.YearRange{}, 1)
		require.NoError(t, err)
		return len(got) == 1
	})
}
