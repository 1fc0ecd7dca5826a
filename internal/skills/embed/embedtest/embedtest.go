// Package embedtest is a fake embeddings server for tests: it answers
// OpenAI's POST /embeddings with deterministic vectors, so code that uses
// vectors is tested without a model or a network.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// Dim is the dimension of the fake's vectors.
const Dim = 64

// Synonyms map words to the concept the fake embeds them as, so texts that
// share no word can still be close: what a real model does with meaning.
var Synonyms = map[string]string{
	"car": "car", "cars": "car", "automobile": "car", "automobiles": "car", "vehicle": "car", "vehicles": "car",
	"heart": "cardiac", "cardiac": "cardiac", "cardiovascular": "cardiac",
}

// Vector is the fake's embedding of text: its words (folded by Synonyms)
// hashed into Dim buckets, counted and normalised to length 1.
func Vector(text string) []float32 {
	v := make([]float64, Dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if s, ok := Synonyms[w]; ok {
			w = s
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%Dim]++
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, Dim)
	for i, x := range v {
		if n > 0 {
			out[i] = float32(x / math.Sqrt(n))
		}
	}
	return out
}

// Server is a running fake. Fail, when set, answers a request instead
// of the fake (return 0 to answer normally), to test errors and retries.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	texts    int
	Fail     func(n int) int
}

// Requests is how many requests reached the fake; Texts how many texts
// it embedded.
func (s *Server) Requests() int { s.mu.Lock(); defer s.mu.Unlock(); return s.requests }

// Texts is how many texts the fake has embedded.
func (s *Server) Texts() int { s.mu.Lock(); defer s.mu.Unlock(); return s.texts }

// NewServer starts a fake closed at the end of the test; its URL is the
// base URL to configure (it answers at URL/embeddings).
func NewServer(t testing.TB) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		n := s.requests
		fail := s.Fail
		s.mu.Unlock()
		if fail != nil {
			if code := fail(n); code != 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				_, _ = w.Write([]byte(`{"error":{"message":"fake failure","type":"test"}}`))
				return
			}
		}
		if r.Method != http.MethodPost || r.URL.Path != "/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || len(req.Input) == 0 {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"bad request"}}`))
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
		}{Object: "list", Model: req.Model}
		// Answer in reverse order: clients must place vectors by index.
		for i := len(req.Input) - 1; i >= 0; i-- {
			resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: Vector(req.Input[i])})
		}
		s.mu.Lock()
		s.texts += len(req.Input)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(s.Close)
	return s
}
