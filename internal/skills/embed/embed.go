// Package embed turns texts into vectors with an embeddings model: a small
// client for any server speaking OpenAI's POST /embeddings (OpenAI, Ollama,
// vLLM, llama.cpp's server), configured like the LLM. It is optional: the
// offline provider (the default) builds no client, and everything that
// uses vectors then works as it did without them.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quarry/internal/fault"
)

// Provider names accepted in Config.Provider, QUARRY_EMBED_PROVIDER and
// the configuration file's embed.provider.
const (
	ProviderOffline = "offline" // no model: no vectors, nothing changes
	ProviderOpenAI  = "openai"  // OpenAI or any server speaking its embeddings API
)

// Defaults of the settings: OpenAI's small embeddings model (cheap, and
// 1536 dimensions that stay fast to compare by brute force), its API, and
// limits sized for batches of abstracts.
const (
	DefaultModel      = "text-embedding-3-small"
	DefaultBaseURL    = "https://api.openai.com/v1/"
	DefaultTimeout    = 60 * time.Second
	DefaultMaxRetries = 3
	// DefaultBatch is how many texts one request carries: few enough that
	// a self-hosted server answers within the timeout, many enough that
	// embedding a library takes thousands of requests, not 170,000.
	DefaultBatch = 64
	// MaxBatch is OpenAI's limit on inputs in one request.
	MaxBatch = 2048
	// MaxResponseBytes bounds one answer: 64 vectors of 4096 floats
	// written as JSON take about 6 MiB, so 64 MiB leaves room for larger
	// models and batches without letting a broken server exhaust memory.
	MaxResponseBytes = 64 << 20
	// MaxTextRunes cuts a text before it is sent: models take a few
	// thousand tokens at most, and a title with its abstract fits.
	MaxTextRunes = 8000
)

// Config selects and configures the embeddings client, like llm.Config.
// APIKey is never serialised, so a Config can be logged or shown.
type Config struct {
	Provider   string        `json:"provider"`
	Model      string        `json:"model"`
	BaseURL    string        `json:"base_url"`
	APIKey     string        `json:"-"` // never serialised: it is a secret
	Timeout    time.Duration `json:"timeout"`
	MaxRetries int           `json:"max_retries"`
	// Batch is how many texts one request carries; zero means DefaultBatch.
	Batch int `json:"batch"`
}

// Enabled reports whether c names a provider that computes vectors.
func (c Config) Enabled() bool {
	p := strings.ToLower(strings.TrimSpace(c.Provider))
	return p != "" && p != ProviderOffline
}

// CheckProvider returns an error naming the valid providers when name is
// not one New builds, so configuration refuses it at start-up.
func CheckProvider(name string) error {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", ProviderOffline, ProviderOpenAI:
		return nil
	}
	return fmt.Errorf("unknown embeddings provider %q; valid providers are %s and %s", name, ProviderOffline, ProviderOpenAI)
}

// Client embeds texts through an OpenAI-compatible embeddings endpoint.
// It is safe for concurrent use.
type Client struct {
	http     *http.Client
	endpoint string
	model    string
	key      string
	retries  int
	batch    int
	// sleep waits between retries; tests make it instant.
	sleep func(ctx context.Context, d time.Duration) error
}

// Option adjusts a Client; tests use it to give their own HTTP client
// and to skip the waits between retries.
type Option func(*Client)

// WithHTTPClient sends requests through h instead of a client of its own.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithoutBackoff retries at once, for tests.
func WithoutBackoff() Option {
	return func(c *Client) { c.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() } }
}

// New returns the client cfg describes, or (nil, nil) for the offline
// provider: there are no vectors and callers do without. Misconfiguration
// (an unknown provider, a bad URL, OpenAI's own API without a key) is
// fault.EInvalid, reported at start-up.
func New(cfg Config, opts ...Option) (*Client, error) {
	if err := CheckProvider(cfg.Provider); err != nil {
		return nil, fault.Errorf(fault.EInvalid, "%s", err.Error())
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	if cfg.MaxRetries < 0 || cfg.Timeout < 0 || cfg.Batch < 0 || cfg.Batch > MaxBatch {
		return nil, fault.Errorf(fault.EInvalid, "embeddings: retries, timeout and batch must not be negative, and a batch holds at most %d texts", MaxBatch)
	}
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fault.Errorf(fault.EInvalid, "embeddings base URL %q is not an http(s) URL", base)
	}
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" && strings.EqualFold(u.Hostname(), "api.openai.com") {
		return nil, fault.Errorf(fault.EInvalid, "the openai embeddings provider needs an API key; set QUARRY_EMBED_API_KEY or OPENAI_API_KEY, or api_key in the QUARRY_CONFIG file's embed object")
	}
	c := &Client{
		http:     &http.Client{Timeout: cmpOr(cfg.Timeout, DefaultTimeout)},
		endpoint: strings.TrimSuffix(base, "/") + "/embeddings",
		model:    cmpOr(strings.TrimSpace(cfg.Model), DefaultModel),
		key:      key,
		retries:  cfg.MaxRetries,
		batch:    cmpOr(cfg.Batch, DefaultBatch),
		sleep:    sleepCtx,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Model names the model whose vectors the client returns: vectors of
// different models cannot be compared, so they are stored under it.
func (c *Client) Model() string { return c.model }

// Embed returns one vector per text, in order, sending the texts in
// batches. All vectors have the same dimension (else fault.EInternal: the
// server is not answering for one model). An empty text is sent as a
// single space, which the API accepts where it refuses "".
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.batch {
		batch := texts[start:min(start+c.batch, len(texts))]
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	for _, v := range out {
		if len(v) != len(out[0]) {
			return nil, fault.Errorf(fault.EInternal, "embeddings: the server answered vectors of %d and %d dimensions", len(out[0]), len(v))
		}
	}
	return out, nil
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

type apiError struct {
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// embedBatch sends one request, retrying a rate limit (429), a server
// error (5xx) or a failed connection with exponential backoff (honouring
// Retry-After), up to the configured retries.
func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = clip(t)
	}
	body, err := json.Marshal(request{Model: c.model, Input: in, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	var last error
	for attempt := 0; ; attempt++ {
		vecs, wait, err := c.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		last = err
		if wait < 0 || attempt >= c.retries || ctx.Err() != nil {
			break
		}
		if wait == 0 {
			wait = time.Duration(500<<attempt) * time.Millisecond
		}
		if err := c.sleep(ctx, min(wait, 30*time.Second)); err != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("embeddings: %w", ctx.Err())
	}
	return nil, last
}

// post sends one request. A retryable failure returns a wait of zero or
// more (the server's Retry-After, when it sends one); a final one -1.
func (c *Client) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fault.Errorf(fault.EInvalid, "embeddings: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL (never the key) is in err; a timeout or refused
		// connection may pass, so it is retried.
		return nil, 0, &fault.Error{Code: fault.EUnavailable, Message: "the embeddings server cannot be reached", Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, 0, &fault.Error{Code: fault.EUnavailable, Message: "the embeddings server's answer broke off", Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("the embeddings server answered %d", resp.StatusCode)
		var ae apiError
		if json.Unmarshal(raw, &ae) == nil && ae.Error.Message != "" {
			msg += ": " + truncate(ae.Error.Message, 300)
		}
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return nil, retryAfter(resp.Header.Get("Retry-After")), fault.Errorf(fault.EUnavailable, "%s", msg)
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return nil, -1, fault.Errorf(fault.EUnauthorized, "%s", msg)
		default:
			return nil, -1, fault.Errorf(fault.EInvalid, "%s", msg)
		}
	}
	if len(raw) > MaxResponseBytes {
		return nil, -1, fault.Errorf(fault.ETooLarge, "the embeddings server's answer is over %d MiB", MaxResponseBytes>>20)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, -1, &fault.Error{Code: fault.EInternal, Message: "the embeddings server's answer is not the embeddings format", Err: err}
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, -1, fault.Errorf(fault.EInternal, "the embeddings server answered a bad or repeated index %d for %d texts", d.Index, n)
		}
		for _, f := range d.Embedding {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, -1, fault.Errorf(fault.EInternal, "the embeddings server answered a vector that is not finite")
			}
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if v == nil {
			return nil, -1, fault.Errorf(fault.EInternal, "the embeddings server answered no vector for text %d of %d", i, n)
		}
	}
	return out, 0, nil
}

// retryAfter reads a Retry-After header in seconds; 0 when absent.
func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clip makes a text sendable: not empty, and not longer than MaxTextRunes.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return " "
	}
	return truncate(s, MaxTextRunes)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
