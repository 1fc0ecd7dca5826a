package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/llm"
)

// kinds are the two wire formats every skill test runs against.
var kinds = []string{llm.ProviderOpenAI, llm.ProviderAnthropic}

const (
	testKey   = "sk-test-123"
	testModel = "test-model"
)

// step is one scripted response of the fake API: an answer (a file in
// testdata/answers wrapped in the provider's recorded response envelope),
// or an error status served with the provider's recorded error body, after
// an optional delay.
type step struct {
	answer string
	status int
	delay  time.Duration
}

func answer(file string) step   { return step{answer: file} }
func failWith(status int) step  { return step{status: status} }
func hang(d time.Duration) step { return step{delay: d, answer: "intent_valid.json"} }

// recorded is one request the fake received.
type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// fake is an httptest server speaking one provider's wire format. The i-th
// request gets the i-th step; requests past the end get the last step.
type fake struct {
	t     *testing.T
	kind  string
	srv   *httptest.Server
	steps []step
	mu    sync.Mutex
	reqs  []recorded
}

func newFake(t *testing.T, kind string, steps ...step) *fake {
	t.Helper()
	require.NotEmpty(t, steps)
	f := &fake{t: t, kind: kind, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "request body is not JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	st := f.steps[min(len(f.reqs), len(f.steps))-1]
	f.mu.Unlock()

	if st.delay > 0 {
		select {
		case <-time.After(st.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if st.status != 0 {
		w.Header().Set("retry-after-ms", "5") // keep the SDKs' retries fast
		w.WriteHeader(st.status)
		_, _ = w.Write(readTestdata(f.t, filepath.Join(f.kind, fmt.Sprintf("error_%d.json", st.status))))
		return
	}
	content, err := json.Marshal(string(readTestdata(f.t, filepath.Join("answers", st.answer))))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	envelope := "openai/chat_completion.json"
	if f.kind == llm.ProviderAnthropic {
		envelope = "anthropic/message.json"
	}
	_, _ = w.Write([]byte(strings.Replace(string(readTestdata(f.t, envelope)), `"__CONTENT__"`, string(content), 1)))
}

func readTestdata(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Errorf("testdata: %v", err)
	}
	return b
}

// baseURL is what an operator would configure: OpenAI-compatible servers
// are addressed with their /v1 prefix, Anthropic at its root.
func (f *fake) baseURL() string {
	if f.kind == llm.ProviderOpenAI {
		return f.srv.URL + "/v1"
	}
	return f.srv.URL
}

// provider returns a provider pointed at the fake with no SDK retries and a
// short per-attempt timeout; edit adjusts the config.
func (f *fake) provider(edit ...func(*llm.Config)) llm.Provider {
	f.t.Helper()
	cfg := llm.Config{Provider: f.kind, Model: testModel, BaseURL: f.baseURL(), APIKey: testKey, Timeout: 5 * time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := llm.New(cfg)
	require.NoError(f.t, err)
	require.NotNil(f.t, p)
	return p
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// prompts returns the user prompt of every request, whatever the format.
func (f *fake) prompts() []string {
	var out []string
	for _, r := range f.requests() {
		out = append(out, userPrompt(f.t, r.Body))
	}
	return out
}

func userPrompt(t *testing.T, body map[string]any) string {
	t.Helper()
	msgs, ok := body["messages"].([]any)
	require.True(t, ok, "messages missing in %v", body)
	var last string
	for _, m := range msgs {
		msg := m.(map[string]any)
		if msg["role"] != "user" {
			continue
		}
		switch c := msg["content"].(type) {
		case string: // OpenAI
			last = c
		case []any: // Anthropic content blocks
			var b strings.Builder
			for _, blk := range c {
				b.WriteString(blk.(map[string]any)["text"].(string))
			}
			last = b.String()
		}
	}
	return last
}

// systemPrompt returns the system prompt of a request in either format.
func systemPrompt(t *testing.T, kind string, body map[string]any) string {
	t.Helper()
	if kind == llm.ProviderAnthropic {
		blocks, _ := body["system"].([]any)
		var b strings.Builder
		for _, blk := range blocks {
			b.WriteString(blk.(map[string]any)["text"].(string))
		}
		return b.String()
	}
	for _, m := range body["messages"].([]any) {
		if msg := m.(map[string]any); msg["role"] == "system" {
			return msg["content"].(string)
		}
	}
	return ""
}

// notes is a concurrency-safe recorder for research.WithNotes.
type notes struct {
	mu  sync.Mutex
	got []research.Note
}

func (n *notes) ctx() context.Context {
	return research.WithNotes(context.Background(), func(x research.Note) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.got = append(n.got, x)
	})
}

func (n *notes) all() []research.Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]research.Note(nil), n.got...)
}
