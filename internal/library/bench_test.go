package library_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/shareddata"
	"quarry/internal/skills/query"
	"quarry/internal/store"
)

var benchCorpusDir = shareddata.Dir("corpus")

// benchTopics are research topics of the kind the corpora cover; each is
// asked in several shapes (as typed, with an OR group, with an exclusion,
// with a year range) to give ~200 realistic local-library queries.
var benchTopics = []string{
	`gaussian splatting`, `"neural radiance fields"`, `diffusion models image editing`, `"large language models" reasoning`,
	`retrieval augmented generation`, `vision language models hallucination`, `"reinforcement learning" robot manipulation`,
	`graph neural networks`, `"federated learning" privacy`, `adversarial robustness`, `"knowledge distillation"`,
	`text to video generation`, `"3d reconstruction" single image`, `autonomous driving planning`, `"chain of thought"`,
	`machine translation low resource`, `"named entity recognition"`, `speech recognition`, `semantic segmentation`,
	`"object detection" transformer`, `contrastive learning`, `"point cloud"`, `monocular depth estimation`,
	`"visual question answering"`, `mixture of experts`, `"in-context learning"`, `protein structure`, `code generation`,
	`"sentiment analysis"`, `pose estimation`, `"optical flow"`, `slam loop closure`, `recommendation systems`,
	`"time series" forecasting`, `anomaly detection`, `"domain adaptation"`, `bayesian optimization`, `"active learning"`,
	`"multi-agent" reinforcement`, `medical image segmentation`,
}

func benchQueries() []struct {
	text  string
	years research.YearRange
} {
	var out []struct {
		text  string
		years research.YearRange
	}
	add := func(text string, years research.YearRange) {
		out = append(out, struct {
			text  string
			years research.YearRange
		}{text, years})
	}
	for _, t := range benchTopics {
		add(t, research.YearRange{})
		add(t+` (survey OR benchmark)`, research.YearRange{})
		add(t+` -medical`, research.YearRange{})
		add(t, research.YearRange{From: 2018})
		add(t+` (efficient OR scalable OR fast)`, research.YearRange{To: 2019})
	}
	return out
}

// BenchmarkLibrary imports both shared corpora (~170k records) into a fresh
// database and times ~200 local-source queries, printing one figure line.
func BenchmarkLibrary(b *testing.B) {
	files := []string{
		filepath.Join(benchCorpusDir, "arxiv_cs_listings_2025_2026.jsonl.gz"),
		filepath.Join(benchCorpusDir, "paperlists_cs_venues.jsonl.gz"),
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			b.Skipf("corpus not present (%v); BenchmarkLibrary needs %s", err, benchCorpusDir)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		st, err := store.Open(ctx, filepath.Join(b.TempDir(), "lib.db"), store.Options{})
		require.NoError(b, err)
		start := time.Now()
		stats, err := library.ImportFiles(ctx, st, files, codecs.Options{}, library.ImportOptions{})
		require.NoError(b, err)
		importS := time.Since(start).Seconds()
		n, err := st.LibraryCount(ctx)
		require.NoError(b, err)

		var lat []float64
		hits := 0
		for _, q := range benchQueries() {
			ast, err := query.Parse(q.text)
			require.NoError(b, err, q.text)
			match := query.RenderAll(ast, []string{query.Local})[query.Local]
			t0 := time.Now()
			got, err := st.SearchLibrary(ctx, match, q.years, 100)
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			require.NoError(b, err, match)
			if len(got) > 0 {
				hits++
			}
		}
		require.Greater(b, hits, len(lat)/2, "most realistic queries must find something")
		sort.Float64s(lat)
		pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
		fmt.Printf("library: import_s=%.1f records=%d records_per_s=%.0f query_p50_ms=%.1f query_p95_ms=%.1f (read=%d stored=%d skipped=%d queries=%d with_hits=%d)\n",
			importS, stats.Read, float64(stats.Read)/importS, pct(0.5), pct(0.95), stats.Read, n, stats.Skipped, len(lat), hits)
		require.NoError(b, st.Close())
	}
}
