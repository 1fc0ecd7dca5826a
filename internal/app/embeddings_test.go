package app_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/skills/embed/embedtest"
	"quarry/internal/store"
)

// TestEmbeddingsConfiguredEmbedTheLibrary: with an embeddings provider the
// app embeds the (demo) library in the background, a restart finds
// nothing left to send, and Close stops the job.
func TestEmbeddingsConfiguredEmbedTheLibrary(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewServer(t)
	db := filepath.Join(t.TempDir(), "q.db")
	env := map[string]string{"QUARRY_DB": db, "QUARRY_ADDR": "127.0.0.1:0",
		"QUARRY_EMBED_PROVIDER": "openai", "QUARRY_EMBED_BASE_URL": srv.URL, "QUARRY_EMBED_MODEL": "fake"}
	cfg, err := load(t, env)
	require.NoError(t, err)
	start := func() *app.App {
		a, err := newApp(t, t.Context(), cfg, app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
			return app.Workflows(cfg.Search, st, slog.New(slog.DiscardHandler))
		}))
		require.NoError(t, err)
		return a
	}
	a := start()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := a.Store().CountVectors(context.Background(), "fake")
		require.NoError(t, err)
		if c.Papers > 0 && c.Embedded == c.Papers {
			break
		}
		require.True(t, time.Now().Before(deadline), "the library was not embedded: %+v", c)
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, a.Close())
	sent := srv.Texts()
	b := start()
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, b.Close())
	require.Equal(t, sent, srv.Texts(), "after a restart nothing is embedded twice")
}

// TestEmbeddingsOfflineByDefault: without a provider nothing is embedded
// and nothing is asked of any server.
func TestEmbeddingsOfflineByDefault(t *testing.T) {
	t.Parallel()
	a, err := newApp(t, t.Context(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	c, err := a.Store().CountVectors(context.Background(), "text-embedding-3-small")
	require.NoError(t, err)
	require.Zero(t, c.Embedded)
}
