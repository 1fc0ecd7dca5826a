package embed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/embed/embedtest"
)

func newClient(t *testing.T, url string, cfg embed.Config) *embed.Client {
	t.Helper()
	cfg.Provider, cfg.BaseURL = embed.ProviderOpenAI, url
	c, err := embed.New(cfg, embed.WithoutBackoff())
	require.NoError(t, err)
	return c
}

func TestEmbedBatchesAndKeepsOrder(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewServer(t)
	c := newClient(t, srv.URL, embed.Config{Model: "fake", Batch: 4})
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("paper %d about word%d", i, i)
	}
	vecs, err := c.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 10)
	require.Equal(t, 3, srv.Requests(), "10 texts in batches of 4")
	for i, v := range vecs {
		require.Equal(t, embedtest.Vector(texts[i]), v, "text %d: vectors are placed by index, not by answer order", i)
	}
	require.Equal(t, "fake", c.Model())
}

func TestEmbedRetriesRateLimitAndServerErrors(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewServer(t)
	srv.Fail = func(n int) int {
		switch n {
		case 1:
			return http.StatusTooManyRequests
		case 2:
			return http.StatusBadGateway
		}
		return 0
	}
	c := newClient(t, srv.URL, embed.Config{Model: "fake", MaxRetries: 2})
	vecs, err := c.Embed(context.Background(), []string{"a text"})
	require.NoError(t, err)
	require.Len(t, vecs, 1)
	require.Equal(t, 3, srv.Requests())
}

func TestEmbedErrorsCarryFaultCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		retries  int
		wantCode string
		wantReqs int
	}{
		{"RateLimitedTooOften", http.StatusTooManyRequests, 1, fault.EUnavailable, 2},
		{"ServerError", http.StatusInternalServerError, 0, fault.EUnavailable, 1},
		{"BadKey", http.StatusUnauthorized, 3, fault.EUnauthorized, 1},
		{"BadRequest", http.StatusBadRequest, 3, fault.EInvalid, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := embedtest.NewServer(t)
			srv.Fail = func(int) int { return tt.status }
			c := newClient(t, srv.URL, embed.Config{Model: "fake", MaxRetries: tt.retries, APIKey: "sk-secret"})
			_, err := c.Embed(context.Background(), []string{"x"})
			require.Error(t, err)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err))
			require.Contains(t, err.Error(), "fake failure", "the server's message is kept")
			require.NotContains(t, err.Error(), "sk-secret")
			require.Equal(t, tt.wantReqs, srv.Requests())
		})
	}
}

func TestEmbedRefusesMalformedAnswers(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"NotJSON":      `nope`,
		"MissingIndex": `{"data":[{"index":0,"embedding":[1,0]}]}`,
		"BadIndex":     `{"data":[{"index":0,"embedding":[1,0]},{"index":5,"embedding":[1,0]}]}`,
		"Empty":        `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1]}]}`,
		"Dimensions":   `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }))
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL, embed.Config{Model: "fake"})
			_, err := c.Embed(context.Background(), []string{"a", "b"})
			require.Error(t, err)
			require.Equal(t, fault.EInternal, fault.ErrorCode(err))
		})
	}
}

func TestEmbedBoundsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[` + strings.Repeat("0.1,", embed.MaxResponseBytes/4) + `1]}]}`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, embed.Config{Model: "fake"})
	_, err := c.Embed(context.Background(), []string{"a"})
	require.Equal(t, fault.ETooLarge, fault.ErrorCode(err))
}

func TestEmbedSendsTheDocumentedRequest(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		require.Equal(t, "/v1/embeddings", r.URL.Path)
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		_, _ = w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.5]}],"model":"m"}`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/v1/", embed.Config{Model: "m", APIKey: "k"})
	_, err := c.Embed(context.Background(), []string{"  "})
	require.NoError(t, err)
	require.Equal(t, "Bearer k", auth)
	require.Equal(t, map[string]any{"model": "m", "input": []any{" "}, "encoding_format": "float"}, got, "an empty text is sent as a space, which the API accepts")
}

func TestNew(t *testing.T) {
	t.Parallel()
	c, err := embed.New(embed.Config{})
	require.NoError(t, err)
	require.Nil(t, c, "offline by default: no client")
	c, err = embed.New(embed.Config{Provider: "offline"})
	require.NoError(t, err)
	require.Nil(t, c)
	_, err = embed.New(embed.Config{Provider: "cohere"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	_, err = embed.New(embed.Config{Provider: "openai"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "OpenAI's own API needs a key")
	require.Contains(t, err.Error(), "QUARRY_EMBED_API_KEY")
	_, err = embed.New(embed.Config{Provider: "openai", BaseURL: "ftp://x"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	c, err = embed.New(embed.Config{Provider: "openai", BaseURL: "http://localhost:11434/v1"})
	require.NoError(t, err, "a self-hosted server needs no key")
	require.Equal(t, embed.DefaultModel, c.Model())
	b, err := json.Marshal(embed.Config{Provider: "openai", APIKey: "sk-secret"})
	require.NoError(t, err)
	require.NotContains(t, string(b), "sk-secret")
}
