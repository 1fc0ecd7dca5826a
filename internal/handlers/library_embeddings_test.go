package handlers_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/handlers/testapp"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/embed/embedtest"
)

// TestLibraryShowsEmbeddingProgress: with an embeddings provider the
// library page says how far embedding the (demo) library has come, and
// its fragment reaches "every paper"; without one there is neither the
// section nor the route.
func TestLibraryShowsEmbeddingProgress(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewServer(t)
	reg, err := testapp.Registry()
	require.NoError(t, err)
	cfg := app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")}
	cfg.Search.Embed = embed.Config{Provider: embed.ProviderOpenAI, BaseURL: srv.URL, Model: "fake"}
	a, err := newApp(t, context.Background(), cfg, app.WithWorkflows(reg))
	require.NoError(t, err)
	w := serveApp(t, a)
	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, page := w.get(t, c, "/library")
	require.Contains(t, page.Find(`[data-testid="embeddings-progress"]`).Text(), "papers embedded")
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, frag := w.htmx(t, c, http.MethodGet, "/library/embeddings", nil)
		require.Equal(t, http.StatusOK, res.StatusCode)
		if strings.Contains(frag.Find(`[data-testid="library-embeddings"]`).Text(), "every paper has a vector") {
			break
		}
		require.True(t, time.Now().Before(deadline), "the library was not embedded")
		time.Sleep(20 * time.Millisecond)
	}

	plain := setupWeb(t)
	c2 := newClient(t)
	plain.signIn(t, c2, "Ada")
	_, page = plain.get(t, c2, "/library")
	require.Zero(t, page.Find(`[data-testid="library-embeddings"]`).Length())
	res, _ := plain.get(t, c2, "/library/embeddings")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
