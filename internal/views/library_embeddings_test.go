package views_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/views"
)

// TestLibraryEmbeddings: the library page says how many papers are
// embedded, polls while the job runs and not after, and shows failures.
func TestLibraryEmbeddings(t *testing.T) {
	t.Parallel()
	doc := render(t, views.LibraryEmbeddings(views.EmbeddingProgress{Model: "nomic-embed-text", Papers: 170000, Embedded: 4096, Running: true}))
	sec := doc.Find(`[data-testid="library-embeddings"]`)
	require.Equal(t, "/library/embeddings", sec.AttrOr("hx-get", ""))
	require.Equal(t, "Semantic search: 4096 of 170000 papers embedded", strings.TrimSpace(doc.Find(`[data-testid="embeddings-progress"]`).Text()))
	require.Contains(t, sec.Text(), "nomic-embed-text")
	require.Zero(t, doc.Find(`[data-testid="embeddings-error"]`).Length())

	at := time.Date(2026, 11, 26, 15, 4, 5, 0, time.UTC)
	doc = render(t, views.LibraryEmbeddings(views.EmbeddingProgress{Model: "m", Papers: 10, Embedded: 3, Errors: 2, LastError: "the embeddings server answered 401", LastErrorAt: at}))
	require.Empty(t, doc.Find(`[data-testid="library-embeddings"]`).AttrOr("hx-get", ""), "no polling while the job waits")
	require.Equal(t, "2 failed batches; the latest at 15:04:05 UTC: the embeddings server answered 401", strings.TrimSpace(doc.Find(`[data-testid="embeddings-error"]`).Text()))
}
