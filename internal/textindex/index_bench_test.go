package textindex

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/research"
	"quarry/internal/shareddata"
	"quarry/internal/skills/query"
)

// benchRow is a corpus paper as the library indexes it: the papers_fts
// columns (title, abstract, authors as the stored JSON, venue, joined
// compounds) and its year for the year filters.
type benchRow struct {
	doc  Doc
	year int
}

// readCorpusRows reads the shared corpora with the library's codecs, one row
// per research.StableID (a later record replaces an earlier one, as an
// import updates it).
func readCorpusRows(tb testing.TB) []benchRow {
	files := shareddata.CorpusFiles()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			tb.Skipf("corpus not present (%v); the textindex benchmark needs %s", err, shareddata.Dir("corpus"))
		}
	}
	var rows []benchRow
	at := map[string]int{}
	for _, f := range files {
		file, err := os.Open(f)
		require.NoError(tb, err)
		r, err := codecs.NewReader(file, f, codecs.Options{})
		require.NoError(tb, err)
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(tb, err)
			p := rec.Paper
			if p.Authors == nil {
				p.Authors = []string{}
			}
			authors, err := json.Marshal(p.Authors)
			require.NoError(tb, err)
			cols := []string{p.Title, p.Abstract, string(authors), p.Venue,
				strings.Join(research.Compounds(p.Title+"\n"+p.Abstract), " ")}
			id := research.StableID(p)
			if i, ok := at[id]; ok {
				rows[i] = benchRow{Doc{ID: rows[i].doc.ID, Cols: cols}, p.Year}
				continue
			}
			at[id] = len(rows)
			rows = append(rows, benchRow{Doc{ID: int64(len(rows) + 1), Cols: cols}, p.Year})
		}
		require.NoError(tb, r.Close())
		require.NoError(tb, file.Close())
	}
	return rows
}

// benchQueries are internal/library's BenchmarkLibrary queries: each
// corpus topic in five shapes, some with a year range.
func benchQueries() []struct {
	text     string
	from, to int
} {
	var out []struct {
		text     string
		from, to int
	}
	for _, t := range shareddata.CorpusTopics() {
		out = append(out,
			struct {
				text     string
				from, to int
			}{t, 0, 0},
			struct {
				text     string
				from, to int
			}{t + ` (survey OR benchmark)`, 0, 0},
			struct {
				text     string
				from, to int
			}{t + ` -medical`, 0, 0},
			struct {
				text     string
				from, to int
			}{t, 2018, 0},
			struct {
				text     string
				from, to int
			}{t + ` (efficient OR scalable OR fast)`, 0, 2019})
	}
	return out
}

// cpuSeconds is the process's CPU time so far, a build figure that holds
// on a machine shared with other work, unlike the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTextIndex builds the index over both shared corpora (~170k
// records) with the ascii tokenizer and times the library benchmark's
// queries (rendered for the local source, 100 results, years as a keep
// filter, as SearchLibrary asks FTS5), printing one figure line.
func BenchmarkTextIndex(b *testing.B) {
	rows := readCorpusRows(b)
	years := map[int64]int{}
	for _, r := range rows {
		years[r.doc.ID] = r.year
	}
	for b.Loop() {
		before := heapInUse()
		ix, err := New(5, asciiTokenize)
		require.NoError(b, err)
		i := 0
		cpu0 := cpuSeconds()
		start := time.Now()
		require.NoError(b, ix.AddAll(func() (Doc, error) {
			if i == len(rows) {
				return Doc{}, io.EOF
			}
			i++
			return rows[i-1].doc, nil
		}))
		buildS := time.Since(start).Seconds()
		buildCPU := cpuSeconds() - cpu0
		heap := heapInUse() - before
		st := ix.Stats()

		var lat []float64
		hits := 0
		for _, q := range benchQueries() {
			ast, err := query.Parse(q.text)
			require.NoError(b, err, q.text)
			match := query.RenderAll(ast, []string{query.Local})[query.Local]
			var keep func(int64) bool
			if q.from != 0 || q.to != 0 {
				keep = func(id int64) bool {
					y := years[id]
					return y == 0 || (q.from == 0 || y >= q.from) && (q.to == 0 || y <= q.to)
				}
			}
			t0 := time.Now()
			e, err := Parse(match)
			require.NoError(b, err, match)
			got, _, err := ix.Search(e, []float64{10, 3, 1, 1, 3}, 0, 100, keep)
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			require.NoError(b, err, match)
			if len(got) > 0 {
				hits++
			}
		}
		require.Greater(b, hits, len(lat)/2, "most realistic queries must find something")
		sort.Float64s(lat)
		pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
		fmt.Printf("textindex: build_docs_per_s=%.0f query_p50_ms=%.2f query_p95_ms=%.2f bytes_per_token=%.2f (rows=%d tokens=%d terms=%d postings=%d build_s=%.2f build_cpu_s=%.2f index_mb=%.0f heap_mb=%.0f queries=%d with_hits=%d max_ms=%.2f)\n",
			float64(len(rows))/buildS, pct(0.5), pct(0.95), float64(st.Bytes)/float64(st.Tokens),
			st.Rows, st.Tokens, st.Terms, st.Postings, buildS, buildCPU, float64(st.Bytes)/1e6, float64(heap)/1e6, len(lat), hits, lat[len(lat)-1])
	}
}
