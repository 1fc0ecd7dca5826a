package medline_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/medline"
	"quarry/internal/skills"
)

// FuzzReader checks that any input is read without panic or endless loop,
// that every record is either a Problem or a valid paper with a sane line
// number, and that what was read survives write → read unchanged.
func FuzzReader(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	require.NoError(f, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add(writeAll(f, records(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		maxRecords := bytes.Count(data, []byte("\n")) + 2
		r := medline.NewReader(bytes.NewReader(data))
		var good []biblio.Record
		prev := 1
		for n := 0; ; n++ {
			require.Less(t, n, maxRecords, "more records than lines: the reader loops")
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			require.GreaterOrEqual(t, rec.Line, prev, "line numbers go back")
			prev = rec.Line
			if rec.Problem == "" {
				require.NoError(t, rec.Paper.Validate())
				good = append(good, rec)
			}
		}
		back := readAll(t, medline.NewReader(bytes.NewReader(writeAll(t, good))))
		require.Len(t, back, len(good))
		for i := range good {
			if !namesStable(good[i]) {
				// biblio.DisplayName is not idempotent for a display name that
				// itself holds a comma ("b a c, d" comes from "a, b, c, d"), so
				// such garbage names cannot be written in any inverted form
				// that reads back the same. Everything else must.
				continue
			}
			require.Equal(t, biblio.Comparable(good[i]), biblio.Comparable(back[i]))
		}
	})
}

func namesStable(rec biblio.Record) bool {
	for _, a := range rec.Paper.Authors {
		if biblio.DisplayName(biblio.ParseName(a).Inverted()) != a {
			return false
		}
	}
	return true
}

// BenchmarkRead100k writes 100,000 synthetic records and reads them back,
// reporting throughput and the largest heap seen while reading, to show
// the reader streams (peak heap far below file_MB).
func BenchmarkRead100k(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "100k.nbib")
	out, err := os.Create(path)
	require.NoError(b, err)
	w := medline.NewWriter(out)
	for i := range n {
		require.NoError(b, w.Write(synthetic(i)))
	}
	require.NoError(b, w.Close())
	require.NoError(b, out.Close())
	st, err := os.Stat(path)
	require.NoError(b, err)

	var elapsed time.Duration
	var peak uint64
	var ms runtime.MemStats
	for b.Loop() {
		runtime.GC()
		f, err := os.Open(path)
		require.NoError(b, err)
		start := time.Now()
		r := medline.NewReader(f)
		count := 0
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(b, err)
			require.Empty(b, rec.Problem)
			count++
			if count%10_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		elapsed = time.Since(start)
		require.NoError(b, f.Close())
		require.Equal(b, n, count)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(peak)/1e6, "peak_heap_MB")
	b.ReportMetric(float64(st.Size())/1e6, "file_MB")
}

// synthetic returns a varied record: a few authors, an abstract of one to
// three paragraphs, identifiers on some records, every type in turn.
func synthetic(i int) biblio.Record {
	types := []string{biblio.Article, biblio.Conference, biblio.Preprint, biblio.Book, biblio.Chapter, biblio.Thesis, biblio.Report, biblio.Misc}
	words := []string{"learning", "retrieval", "systematic", "review", "neural", "screening", "bayesian", "évaluation", "graph", "query"}
	title := fmt.Sprintf("A study of %s and %s number %d", words[i%10], words[(i/10)%10], i)
	abstract := ""
	for p := 0; p <= i%3; p++ {
		if p > 0 {
			abstract += "\n\n"
		}
		for s := 0; s < 8; s++ {
			abstract += fmt.Sprintf("Sentence %d about %s in paragraph %d. ", s, words[(i+s)%10], p)
		}
	}
	rec := biblio.Record{Type: types[i%len(types)], Paper: skills.RawPaper{
		Title: title, Year: 1990 + i%35, Venue: "Journal of " + words[i%10],
		Volume: fmt.Sprint(i % 90), Issue: fmt.Sprint(i % 12), Pages: fmt.Sprintf("%d-%d", i%500, i%500+12),
		Abstract: abstract,
	}, Keywords: []string{words[i%10], words[(i+3)%10]}}
	for a := 0; a <= i%5; a++ {
		rec.Paper.Authors = append(rec.Paper.Authors, fmt.Sprintf("Author%d M. Surname%d", a, i%1000))
	}
	switch i % 4 {
	case 0:
		rec.Paper.DOI = fmt.Sprintf("10.1000/x.%d", i)
	case 1:
		rec.Paper.ArxivID = fmt.Sprintf("2101.%05d", i)
	case 2:
		rec.Paper.PMID = fmt.Sprint(30000000 + i)
	}
	if i%7 == 0 {
		rec.Mark, rec.Note = biblio.Relevant, "keep; cited in the protocol"
	}
	return rec
}
