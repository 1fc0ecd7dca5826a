package eval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
)

// writeSearchDir writes a tiny benchmark: a fish review whose four included
// records the search and BM25 find three of (the axolotl shares no word
// with the question), behind thirty filler records that match the
// question better, so recall@25 is 0 and recall@100 is 3/4; a heart review
// whose second included record is the fish review's second one (same
// title, other case and punctuation, no DOI), which the question does not
// find; and the filler review, which includes nothing and so is left out
// of the means. The heart review's third record has the fish review's
// first record's PMID: one record of the pool; its fifth, included, has no
// title, so no library can hold it: it stays a miss for both methods; its
// sixth, included, has the PMID of an untitled fish record read before it,
// and is pooled (and found) all the same.
func writeSearchDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	write("reviews.json", `{"Fish":{"review_title":"zebrafish fin regeneration"},"Heart":{"review_title":"cardiac fibrosis"},"Filler":{"topic":"Zebrafish"}}`)
	write("Fish.csv", `record_id,title,abstract,pmid,doi,label_included
1,Zebrafish fin regeneration after amputation,The fin of the zebrafish regrows after amputation: regeneration.,111,,1
2,Regeneration of the zebrafish heart,Zebrafish regenerate heart muscle; fin regeneration is compared.,,10.1000/z2,1
3,Axolotl limb growth,Salamanders regrow limbs.,,,1
4,Zebrafish husbandry,Housing fish in the laboratory.,,,0
5,Fin whale songs,Songs of the fin whale at sea.,,,1
6,,,222,,0
`)
	write("Heart.csv", `record_id,title,abstract,pmid,doi,label_included
1,Cardiac fibrosis in mice,Fibrosis of the cardiac muscle after infarction.,,,1
2,REGENERATION of the Zebrafish Heart.,,,,1
3,Fin regrowth,,111,,0
4,Myocardial scarring imaging,Magnetic resonance of cardiac fibrosis in patients.,,10.1000/h4,0
5,,Cardiac fibrosis without a title.,,,1
6,Cardiac fibrosis in rats,Fibrosis of cardiac tissue.,222,,1
`)
	var filler strings.Builder
	filler.WriteString("record_id,title,abstract,label_included\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&filler, "%d,Zebrafish fin regeneration study %d,Zebrafish fin regeneration: zebrafish fin regeneration.,0\n", i, i)
	}
	write("Filler.csv", filler.String())
	return dir
}

func TestSearchBenchmarkTiny(t *testing.T) {
	t.Parallel()
	dir := writeSearchDir(t)
	var out bytes.Buffer
	sum, err := Search(context.Background(), dir, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Equal(t, 6+6+30-2-2, sum.Pool, "two duplicates and two untitled records left out")
	require.Len(t, sum.Reviews, 3)
	byName := map[string]SearchResult{}
	for _, r := range sum.Reviews {
		byName[r.Review] = r
	}
	fish, heart, filler := byName["Fish"], byName["Heart"], byName["Filler"]
	require.Equal(t, 4, fish.Included)
	require.Equal(t, []float64{0, 0.75, 0.75, 0.75}, fish.Recall)
	require.Equal(t, []float64{0, 0.75, 0.75, 0.75}, fish.BM25)
	require.Equal(t, 4, heart.Included)
	require.Equal(t, 1, heart.Unpooled)
	require.Equal(t, []float64{0.5, 0.5, 0.5, 0.5}, heart.Recall)
	require.Equal(t, []float64{0.5, 0.5, 0.5, 0.5}, heart.BM25)
	require.Equal(t, 0, filler.Included)
	require.Equal(t, 34, filler.Returned, "the 30 fillers and the four zebrafish records, ranked (the husbandry one matches the word alone)")
	want := []float64{0.25, 0.625, 0.625, 0.625}
	require.InDeltaSlice(t, want, sum.MeanRecall, 1e-12)
	require.InDeltaSlice(t, want, sum.MeanBM25, 1e-12)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6)
	require.Equal(t, "pool: records=38 library=38 reviews=3 untitled=2 skipped=0", lines[0])
	require.Equal(t, "Fish: included=4 unpooled=0 returned=34 recall@25=0.0000 recall@100=0.7500 recall@500=0.7500 recall@1000=0.7500 bm25_recall@25=0.0000 bm25_recall@100=0.7500 bm25_recall@500=0.7500 bm25_recall@1000=0.7500", lines[2])
	require.Equal(t, "search: recall@100=0.6250 recall@500=0.6250 bm25_recall@100=0.6250 bm25_recall@500=0.6250", lines[5])

	_, err = Search(context.Background(), filepath.Join(dir, "missing"), &out)
	require.Error(t, err)
}

// TestSearchRecallAtCaps checks the cut-offs on a ranking longer than the
// smallest cap and one shorter than the largest (strict matching returns
// few): recall is what the first N hold, and what was not returned counts
// as missed.
func TestSearchRecallAtCaps(t *testing.T) {
	t.Parallel()
	ranked := make([]int, 600)
	for i := range ranked {
		ranked[i] = i
	}
	included := map[int]bool{3: true, 50: true, 400: true, 5000: true}
	require.Equal(t, []float64{0.25, 0.5, 0.75, 0.75}, recallAt(ranked, included))
	require.Equal(t, []float64{0, 0, 0, 0}, recallAt(nil, included))
	require.Equal(t, []float64{0, 0, 0, 0}, recallAt(ranked, nil))
}

// TestBM25Baseline checks the baseline's order, computed by hand (scores
// 1.517, 0.939, 0.708, 0.521): both words beat one; the rarer word
// (banana, in 2 of 5) beats the commoner (apple, in 3); the word once in a
// one-word record beats it twice in a six-word one; a record with no
// question word is not ranked.
func TestBM25Baseline(t *testing.T) {
	t.Parallel()
	var papers []research.RawPaper
	for _, a := range []string{"apple banana", "apple", "apple apple cherry cherry cherry cherry", "cherry", "banana split"} {
		papers = append(papers, research.RawPaper{Title: "", Abstract: a})
	}
	b := newBM25(papers)
	require.Equal(t, []int{0, 4, 1, 2}, b.rank("Banana, APPLE!", 10))
	require.Equal(t, []int{0}, b.rank("banana apple", 1))
}

// TestSearchSharedData runs the benchmark on the shared review sets when
// they are present: it must complete and print its summary line. All of
// them take about 20 s (3.5 min with -race beside other packages, which
// slows ranked retrieval several times: the searcher's timeouts are off
// for a measurement, see offlineSearch); -short runs three small reviews.
func TestSearchSharedData(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(screeningDataDir, "reviews.json")); err != nil {
		t.Skipf("shared screening data not found at %s (set up ../shared/data to run the search benchmark): %v", screeningDataDir, err)
	}
	dir, reviews := screeningDataDir, 12
	if testing.Short() {
		dir, reviews = t.TempDir(), 3
		for _, f := range []string{"reviews.json", "Cohen_2006_Antihistamines.csv.gz", "Donners_2021.csv.gz", "Cohen_2006_Estrogens.csv.gz"} {
			raw, err := os.ReadFile(filepath.Join(screeningDataDir, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), raw, 0o600))
		}
	}
	var out bytes.Buffer
	sum, err := Search(context.Background(), dir, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, sum.Reviews, reviews)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, `^search: recall@100=\d\.\d{4} recall@500=\d\.\d{4} bm25_recall@100=\d\.\d{4} bm25_recall@500=\d\.\d{4}$`, lines[len(lines)-1])
}

// TestSearchLOSOTiny: the leave-one-review-out selection prints one fold
// per review and the held-out line, and each fold's figure is its review's
// figure under the tuning the other reviews chose.
func TestSearchLOSOTiny(t *testing.T) {
	t.Parallel()
	dir := writeSearchDir(t)
	var out bytes.Buffer
	held, err := SearchLOSO(context.Background(), dir, &out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1+3+2, out.String())
	require.True(t, strings.HasPrefix(lines[1], "fold Filler: TitleWeight="), lines[1])
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "search loso: recall@100="), lines[len(lines)-1])
	require.Len(t, held.Reviews, 3)
	require.InDeltaSlice(t, []float64{0.25, 0.625, 0.625, 0.625}, held.MeanRecall, 1e-12, "on this pool every tuning finds the same records")
}
