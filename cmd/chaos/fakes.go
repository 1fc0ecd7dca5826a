package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode"
)

// fakes are OpenAlex and Crossref as the quarry binary sees them: their
// documented /works responses, served on 127.0.0.1 so nothing leaves the
// machine. Each request takes 20–300 ms, so a kill often lands while a
// search is in flight. The papers depend only on the query's words, so a
// search repeated after a restart finds the same papers, and queries that
// share words find the same DOIs at both sources (work for the dedup step).
type fakes struct {
	openalex, crossref *httptest.Server
	mu                 sync.Mutex
	onRequest          func() // the current trial's hook, called at each request
}

func startFakes() *fakes {
	f := &fakes{}
	f.openalex = httptest.NewServer(http.HandlerFunc(f.serveOpenAlex))
	f.crossref = httptest.NewServer(http.HandlerFunc(f.serveCrossref))
	return f
}

func (f *fakes) close() {
	f.openalex.Close()
	f.crossref.Close()
}

// hook sets what every request reports to (nil: nothing).
func (f *fakes) hook(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onRequest = fn
}

// arrive reports the request and waits its jittered latency; false when
// the client went away meanwhile (the server was killed).
func (f *fakes) arrive(r *http.Request) bool {
	f.mu.Lock()
	fn := f.onRequest
	f.mu.Unlock()
	if fn != nil {
		fn()
	}
	t := time.NewTimer(time.Duration(20+rand.IntN(281)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// fakePaper is one paper in the fakes' made-up literature.
type fakePaper struct {
	doi, title, author, venue, abstract string
	year                                int
}

// papersFor makes up to max papers for a query: two per distinct word,
// named by the word, so the same word gives the same DOI everywhere.
func papersFor(query string, max int) []fakePaper {
	var out []fakePaper
	seen := map[string]bool{}
	for _, w := range words(query) {
		if seen[w] {
			continue
		}
		seen[w] = true
		n := hash32(w)
		for i := range 2 {
			if len(out) >= max {
				return out
			}
			out = append(out, fakePaper{
				doi:      fmt.Sprintf("10.5555/chaos.%s.%d", w, i),
				title:    fmt.Sprintf("%s%s in practice, part %d", strings.ToUpper(w[:1]), w[1:], i+1),
				author:   fmt.Sprintf("Author %d", n%97),
				venue:    "Journal of Chaos Testing",
				abstract: fmt.Sprintf("A made-up study of %s for Quarry's chaos trials (%s).", w, query),
				year:     2000 + int(n%20) + i,
			})
		}
	}
	return out
}

func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// words are a query's lower-case words, without its operators.
func words(query string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		switch w {
		case "AND", "OR", "NOT":
			continue
		}
		if w = strings.ToLower(w); len(w) > 1 {
			out = append(out, w)
		}
	}
	return out
}

func intParam(r *http.Request, name string, def int) int {
	var n int
	if _, err := fmt.Sscan(r.URL.Query().Get(name), &n); err != nil || n <= 0 {
		return def
	}
	return n
}

// serveOpenAlex answers GET /works?filter=title_and_abstract.search:…&per_page=…&page=… with one
// page of works and meta.count (so the client stops paging).
func (f *fakes) serveOpenAlex(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/works" {
		http.NotFound(w, r)
		return
	}
	if !f.arrive(r) {
		return
	}
	q, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Query().Get("filter"), "title_and_abstract.search:"), ",from_publication_date")
	all := papersFor(q, 12)
	perPage, page := intParam(r, "per_page", 25), intParam(r, "page", 1)
	results := []map[string]any{}
	for i := (page - 1) * perPage; i < len(all) && i < page*perPage; i++ {
		p := all[i]
		abstract := map[string][]int{}
		for j, word := range strings.Fields(p.abstract) {
			abstract[word] = append(abstract[word], j)
		}
		results = append(results, map[string]any{
			"id":                      fmt.Sprintf("https://openalex.org/W%d", hash32(p.doi)),
			"doi":                     "https://doi.org/" + p.doi,
			"title":                   p.title,
			"display_name":            p.title,
			"publication_year":        p.year,
			"authorships":             []map[string]any{{"author": map[string]string{"display_name": p.author}}},
			"primary_location":        map[string]any{"landing_page_url": "https://doi.org/" + p.doi, "source": map[string]string{"display_name": p.venue}},
			"abstract_inverted_index": abstract,
		})
	}
	writeJSON(w, map[string]any{"meta": map[string]any{"count": len(all), "page": page, "per_page": perPage}, "results": results})
}

// serveCrossref answers GET /works?query.bibliographic=…&rows=… with a
// work-list message.
func (f *fakes) serveCrossref(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/works" {
		http.NotFound(w, r)
		return
	}
	if !f.arrive(r) {
		return
	}
	all := papersFor(r.URL.Query().Get("query.bibliographic"), intParam(r, "rows", 20))
	items := []map[string]any{}
	for _, p := range all {
		items = append(items, map[string]any{
			"DOI":             p.doi,
			"URL":             "https://doi.org/" + p.doi,
			"title":           []string{p.title},
			"container-title": []string{p.venue},
			"author":          []map[string]string{{"given": "A.", "family": p.author}},
			"issued":          map[string]any{"date-parts": [][]int{{p.year}}},
			"abstract":        "<jats:p>" + p.abstract + "</jats:p>",
		})
	}
	writeJSON(w, map[string]any{"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
		"message": map[string]any{"total-results": len(items), "items": items, "items-per-page": len(items)}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
