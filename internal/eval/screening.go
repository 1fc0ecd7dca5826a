package eval

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/relevance"
)

// ScreeningBatch is how many papers the simulated researcher marks per
// iteration before the scorer re-ranks the rest, as in ASReview's
// benchmark runs.
const ScreeningBatch = 10

// ScreeningResult is one review's simulated screening.
type ScreeningResult struct {
	Review   string `json:"review"`
	Records  int    `json:"records"`
	Included int    `json:"included"`
	// ScreenedTo95 is how many records were screened before 95% of the
	// included ones had been found.
	ScreenedTo95 int `json:"screened_to_95"`
	// WSS95 is work saved over sampling at 95% recall, in percent:
	// (N - ScreenedTo95)/N - 5%.
	WSS95 float64 `json:"wss95"`
	// WSS95Insights is WSS@95 as asreview-insights (ASReview v1 and later)
	// computes it, reported beside WSS95 because the two definitions
	// differ and the same ranking scores differently under each; see
	// wssInsights.
	WSS95Insights float64 `json:"wss95_insights"`
	// RRF10 is the percentage of included records found after screening
	// 10% of the records.
	RRF10 float64 `json:"rrf10"`
	// Iterations is the number of re-rankings until every included record
	// was found.
	Iterations int `json:"iterations"`
}

// ScreeningSummary is every review's result and the means the benchmark is
// judged by.
type ScreeningSummary struct {
	Reviews   []ScreeningResult `json:"reviews"`
	MeanWSS95 float64           `json:"mean_wss95"`
	MeanRRF10 float64           `json:"mean_rrf10"`
	// MeanWSS95Insights is the mean of WSS95Insights.
	MeanWSS95Insights float64 `json:"mean_wss95_insights"`
}

// ScreeningRecord is one candidate paper of a review with its label.
type ScreeningRecord struct {
	Paper    research.RawPaper
	Included bool
}

// ScreeningReview is a review's question and its candidate records.
type ScreeningReview struct {
	Name     string
	Question string
	Records  []ScreeningRecord
}

// screeningMeta is the part of reviews.json the harness reads.
type screeningMeta struct {
	ReviewTitle         string `json:"review_title"`
	Topic               string `json:"topic"`
	EligibilityCriteria string `json:"eligibility_criteria"`
	ReviewAbstract      string `json:"review_abstract"`
}

// Screening simulates a researcher screening every review in dir (CSV or
// gzip CSV files described by dir/reviews.json) with the app's relevance
// scorer, prints one line per review and a final
// "screening: mean_wss95=W mean_rrf10=F" line to out, and returns the figures.
func Screening(ctx context.Context, dir string, out io.Writer) (ScreeningSummary, error) {
	names, err := ScreeningReviewNames(dir)
	if err != nil {
		return ScreeningSummary{}, err
	}
	return ScreeningOf(ctx, dir, names, out)
}

// ScreeningOf is Screening restricted to the named reviews, so a quick test
// can run a subset.
func ScreeningOf(ctx context.Context, dir string, names []string, out io.Writer) (ScreeningSummary, error) {
	return ScreeningOfWith(ctx, dir, names, ScreeningOptions{}, out)
}

// ScreeningOfWith is ScreeningOf with a chosen method, tie order and
// stopping rule, so a baseline or a variant is measured the same way.
func ScreeningOfWith(ctx context.Context, dir string, names []string, opt ScreeningOptions, out io.Writer) (ScreeningSummary, error) {
	var sum ScreeningSummary
	for _, name := range names {
		rev, err := ReadScreeningReview(dir, name)
		if err != nil {
			return sum, err
		}
		res, err := SimulateScreeningWith(ctx, rev, opt)
		if err != nil {
			return sum, err
		}
		fmt.Fprintf(out, "%s: records=%d included=%d wss95=%.1f rrf10=%.1f screened_to_95=%d iterations=%d wss95_insights=%.1f\n",
			res.Review, res.Records, res.Included, res.WSS95, res.RRF10, res.ScreenedTo95, res.Iterations, res.WSS95Insights)
		sum.Reviews = append(sum.Reviews, res)
	}
	var n float64
	for _, r := range sum.Reviews {
		if r.Included == 0 {
			continue
		}
		sum.MeanWSS95 += r.WSS95
		sum.MeanRRF10 += r.RRF10
		sum.MeanWSS95Insights += r.WSS95Insights
		n++
	}
	if n > 0 {
		sum.MeanWSS95 /= n
		sum.MeanRRF10 /= n
		sum.MeanWSS95Insights /= n
	}
	fmt.Fprintf(out, "insights: mean_wss95=%.1f (asreview-insights definition)\n", sum.MeanWSS95Insights)
	fmt.Fprintf(out, "screening: mean_wss95=%.1f mean_rrf10=%.1f\n", sum.MeanWSS95, sum.MeanRRF10)
	return sum, nil
}

// ScreeningReviewNames lists the reviews in dir: every *.csv or *.csv.gz,
// by name without extension, sorted.
func ScreeningReviewNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &fault.Error{Code: fault.ENotFound, Message: "screening data directory " + dir, Err: err}
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, ".csv.gz"):
			names = append(names, strings.TrimSuffix(n, ".csv.gz"))
		case strings.HasSuffix(n, ".csv"):
			names = append(names, strings.TrimSuffix(n, ".csv"))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// ReadScreeningReview reads review name from dir: its records and, from
// reviews.json, its research question.
func ReadScreeningReview(dir, name string) (ScreeningReview, error) {
	meta, err := screeningReadMeta(dir)
	if err != nil {
		return ScreeningReview{}, err
	}
	recs, err := screeningReadCSV(dir, name)
	if err != nil {
		return ScreeningReview{}, err
	}
	m, ok := meta[name]
	if !ok {
		m = screeningMeta{Topic: name}
	}
	return ScreeningReview{Name: name, Question: screeningQuestion(m), Records: recs}, nil
}

// screeningQuestion is what a researcher would type: the review title with
// its eligibility criteria, or its abstract when there are no criteria, or
// the bare topic when there is neither.
func screeningQuestion(m screeningMeta) string {
	parts := []string{strings.TrimSpace(m.ReviewTitle)}
	switch {
	case strings.TrimSpace(m.EligibilityCriteria) != "":
		parts = append(parts, strings.TrimSpace(m.EligibilityCriteria))
	case strings.TrimSpace(m.ReviewAbstract) != "":
		parts = append(parts, strings.TrimSpace(m.ReviewAbstract))
	}
	q := strings.TrimSpace(strings.Join(parts, "\n"))
	if q == "" {
		q = screeningSplitCamel(m.Topic)
	}
	return q
}

// screeningSplitCamel turns an identifier-like topic ("ACEInhibitors") into
// words ("ACE Inhibitors"), as a person would have typed it.
func screeningSplitCamel(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) ||
			(i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1]))) {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func screeningReadMeta(dir string) (map[string]screeningMeta, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "reviews.json"))
	if err != nil {
		return nil, &fault.Error{Code: fault.ENotFound, Message: "reviews.json in " + dir, Err: err}
	}
	var meta map[string]screeningMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, &fault.Error{Code: fault.EInvalid, Message: "reviews.json", Err: err}
	}
	return meta, nil
}

func screeningReadCSV(dir, name string) ([]ScreeningRecord, error) {
	path := filepath.Join(dir, name+".csv.gz")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(dir, name+".csv")
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, &fault.Error{Code: fault.ENotFound, Message: "review " + name, Err: err}
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, &fault.Error{Code: fault.EInvalid, Message: path, Err: err}
		}
		defer gz.Close()
		r = gz
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, &fault.Error{Code: fault.EInvalid, Message: path + ": no header", Err: err}
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"title", "label_included"} {
		if _, ok := col[need]; !ok {
			return nil, fault.Errorf(fault.EInvalid, "%s: no %s column", path, need)
		}
	}
	get := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	var recs []ScreeningRecord
	for line := 2; ; line++ {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &fault.Error{Code: fault.EInvalid, Message: path, Err: err}
		}
		id := get(row, "record_id")
		if id == "" {
			id = fmt.Sprint(line)
		}
		recs = append(recs, ScreeningRecord{
			Paper: research.RawPaper{
				ID:       id,
				Title:    get(row, "title"),
				Abstract: get(row, "abstract"),
				DOI:      get(row, "doi"),
				PMID:     get(row, "pmid"),
			},
			Included: strings.TrimSpace(get(row, "label_included")) == "1",
		})
	}
	return recs, nil
}

// ScreeningRanker ranks a review's records given the indices of the records
// marked so far; higher scores are screened first.
type ScreeningRanker interface {
	Rank(relevant, irrelevant []int) []float64
}

// ScreeningMethod builds a review's ranker from the parsed question, its
// raw text and the records. Methods are pluggable so that a reference
// baseline runs through exactly the same simulation as the app's scorer.
type ScreeningMethod func(intent research.ParsedIntent, question string, papers []research.RawPaper) ScreeningRanker

// ScreeningScorer is the app's relevance scorer (the default method).
func ScreeningScorer(intent research.ParsedIntent, _ string, papers []research.RawPaper) ScreeningRanker {
	return relevance.NewIndex(intent, papers)
}

// ScreeningOptions varies a simulation. The zero value runs the app's
// scorer with the fixed tie order the benchmark figures are quoted with.
type ScreeningOptions struct {
	// Method ranks the records; nil means ScreeningScorer.
	Method ScreeningMethod
	// TieSeed, when non-zero, replaces the fixed tie-break order's seed, to
	// tell a real gain from tie-order luck.
	TieSeed uint64
	// StopAt95 ends a run once 95% of the included records are found (and
	// a tenth of the records is screened): WSS@95 and RRF@10 are then
	// final, only Iterations is cut short. Experiments use it for speed.
	StopAt95 bool
}

// SimulateScreening plays the researcher at the result review: each
// iteration the scorer ranks the unscreened records given every mark so
// far, the researcher marks the top ScreeningBatch by their label, and this
// repeats until every included record has been found.
func SimulateScreening(ctx context.Context, rev ScreeningReview) (ScreeningResult, error) {
	return SimulateScreeningWith(ctx, rev, ScreeningOptions{})
}

// SimulateScreeningWith is SimulateScreening with a chosen method, tie
// order and stopping rule.
func SimulateScreeningWith(ctx context.Context, rev ScreeningReview, opt ScreeningOptions) (ScreeningResult, error) {
	n := len(rev.Records)
	res := ScreeningResult{Review: rev.Name, Records: n}
	papers := make([]research.RawPaper, n)
	for i, r := range rev.Records {
		papers[i] = r.Paper
		if r.Included {
			res.Included++
		}
	}
	if n == 0 || res.Included == 0 {
		return res, nil
	}
	intent, err := screeningIntent(ctx, rev.Question)
	if err != nil {
		return res, err
	}
	method := opt.Method
	if method == nil {
		method = ScreeningScorer
	}
	idx := method(intent, rev.Question, papers)
	tie := screeningTieOrder(n, opt.TieSeed)
	screened := make([]bool, n)
	need := int(math.Ceil(0.95 * float64(res.Included)))
	tenth := int(math.Ceil(0.10 * float64(n)))
	var rel, irr, order []int
	found := 0
	for found < res.Included && len(order) < n {
		if opt.StopAt95 && found >= need && len(order) >= tenth {
			break
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		scores := idx.Rank(rel, irr)
		res.Iterations++
		for _, i := range screeningTop(scores, tie, screened, ScreeningBatch) {
			screened[i] = true
			order = append(order, i)
			if rev.Records[i].Included {
				rel = append(rel, i)
				found++
			} else {
				irr = append(irr, i)
			}
		}
	}
	labels := make([]bool, len(order))
	for k, i := range order {
		labels[k] = rev.Records[i].Included
	}
	res.WSS95Insights = wssInsights(labels, n, res.Included)
	got, inTenth := 0, 0
	for k, i := range order {
		if !rev.Records[i].Included {
			continue
		}
		got++
		if k < tenth {
			inTenth++
		}
		if got == need {
			res.ScreenedTo95 = k + 1
		}
	}
	res.WSS95 = 100 * (float64(n-res.ScreenedTo95)/float64(n) - 0.05)
	res.RRF10 = 100 * float64(inTenth) / float64(res.Included)
	return res, nil
}

// wssInsights is WSS@95 in percent as asreview-insights defines it
// (algorithms._wss_values with metrics._slice_metric), for the screening
// order labels (true = included) of n records with pos included ones:
//   - it is read at the last include count k with k/pos <= 0.95 (38 of 41
//     for ACE), where WSS95 uses the first count reaching 95% (39 of 41);
//   - random screening is the rounded straight line from 0 to pos over
//     the n records, and WSS is how many records fewer than that line
//     needed to find k includes, over n. WSS95 instead subtracts the fixed
//     5% from the share of records left unscreened (Cohen et al. 2006).
//
// A run cut short by StopAt95 has already found the k-th include, so its
// figure is final too.
func wssInsights(labels []bool, n, pos int) float64 {
	if n < 2 || pos == 0 {
		return 0
	}
	k := 0
	for c := 1; c <= pos; c++ {
		if float64(c)/float64(pos) <= 0.95 {
			k = c
		}
	}
	if k == 0 {
		k = pos // numpy's y[-1]: a single include is read at itself
	}
	found, at := 0, n
	for i, inc := range labels {
		if inc {
			found++
			if found == k {
				at = i
				break
			}
		}
	}
	random := n - 1
	step := float64(pos) / float64(n-1)
	for i := 0; i < n; i++ {
		if math.RoundToEven(float64(i)*step) >= float64(k) {
			random = i
			break
		}
	}
	return 100 * float64(random-at) / float64(n)
}

// screeningIntent parses the question with the app's offline intent
// parser, as the pipeline's first step would, with a fixed clock so
// relative years cannot make two runs differ.
func screeningIntent(ctx context.Context, question string) (research.ParsedIntent, error) {
	clock := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	intent, err := intent.New(clock).ParseIntent(ctx, question)
	if err != nil {
		return research.ParsedIntent{}, fmt.Errorf("screening: parse question: %w", err)
	}
	return intent, nil
}

// screeningTieOrder is a fixed pseudo-random rank per record position used
// to break score ties. Breaking ties by file position would leak labels:
// some source files list their included records first (Kitchenham_2010),
// and early rankings tie on every paper without a question term. The seed
// is constant, so runs stay reproducible; a non-zero seed replaces it.
func screeningTieOrder(n int, seed uint64) []int {
	if seed == 0 {
		return rand.New(rand.NewPCG(2006, 95)).Perm(n)
	}
	return rand.New(rand.NewPCG(seed, 95)).Perm(n)
}

// screeningTop returns up to k unscreened indices with the highest scores,
// ties broken by tie (a rank per index) so the run is deterministic and
// independent of the order of the file.
func screeningTop(scores []float64, tie []int, screened []bool, k int) []int {
	top := make([]int, 0, k+1)
	better := func(a, b int) bool {
		return scores[a] > scores[b] || (scores[a] == scores[b] && tie[a] < tie[b])
	}
	for i := range scores {
		if screened[i] {
			continue
		}
		if len(top) == k && !better(i, top[k-1]) {
			continue
		}
		pos := len(top)
		for pos > 0 && better(i, top[pos-1]) {
			pos--
		}
		top = slices.Insert(top, pos, i)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}
