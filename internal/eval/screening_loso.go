package eval

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"quarry/internal/research"
	"quarry/internal/skills/relevance"
)

// screeningConstant is one constant of the relevance scorer that was chosen
// by looking at results, and the values the leave-one-review-out harness
// tries for it (the default among them).
type screeningConstant struct {
	name   string
	values []float64
	get    func(relevance.Tuning) float64
	set    func(*relevance.Tuning, float64)
}

// screeningConstants are every tuned constant of the scorer (see
// relevance.Tuning). The grids are small because every candidate costs a
// simulation of every review; they span a factor of about two each way.
// BM25's k1 and b, naive Bayes's alpha and the TF-IDF settings are
// textbook or ASReview defaults, not chosen on results, so they are not
// here; neither are the display calibration and the reasons' threshold,
// which never change the order.
func screeningConstants() []screeningConstant {
	return []screeningConstant{
		{"svm_c", []float64{0.05, 0.1, 0.2},
			func(t relevance.Tuning) float64 { return t.SVMC }, func(t *relevance.Tuning, v float64) { t.SVMC = v }},
		{"background", []float64{100, 200, 400},
			func(t relevance.Tuning) float64 { return t.Background }, func(t *relevance.Tuning, v float64) { t.Background = v }},
		{"nb_share", []float64{0.3, 0.5, 0.7},
			func(t relevance.Tuning) float64 { return t.NBShare }, func(t *relevance.Tuning, v float64) { t.NBShare = v }},
		{"lexical_half", []float64{0.25, 0.5, 1},
			func(t relevance.Tuning) float64 { return t.LexicalHalf }, func(t *relevance.Tuning, v float64) { t.LexicalHalf = v }},
		{"cold_share", []float64{0.25, 0.5, 0.75},
			func(t relevance.Tuning) float64 { return t.ColdShare }, func(t *relevance.Tuning, v float64) { t.ColdShare = v }},
		{"query_doc_w", []float64{0.5, 1, 2},
			func(t relevance.Tuning) float64 { return t.QueryDocW }, func(t *relevance.Tuning, v float64) { t.QueryDocW = v }},
		{"title_weight", []float64{1, 2},
			func(t relevance.Tuning) float64 { return t.TitleWeight }, func(t *relevance.Tuning, v float64) { t.TitleWeight = v }},
	}
}

// screeningFig is one review's two figures under one candidate.
type screeningFig struct{ wss, rrf float64 }

// looPick returns the index of the value chosen for the fold that holds
// out review held: the best mean WSS@95 over the other reviews, ties
// broken by mean RRF@10, then by the value nearest the default (relative
// distance). figs[c][r] is candidate c's figures on review r; reviews
// whose use[r] is false (no included record) do not count.
func looPick(values []float64, def float64, figs [][]screeningFig, use []bool, held int) int {
	best := -1
	var bw, br, bd float64
	for c := range values {
		var w, r, n float64
		for rv, f := range figs[c] {
			if rv == held || !use[rv] {
				continue
			}
			w += f.wss
			r += f.rrf
			n++
		}
		if n > 0 {
			w, r = w/n, r/n
		}
		d := math.Abs(values[c]-def) / math.Max(math.Abs(def), 1e-9)
		const eps = 1e-9
		better := best < 0 || w > bw+eps ||
			(math.Abs(w-bw) <= eps && (r > br+eps || (math.Abs(r-br) <= eps && d < bd)))
		if better {
			best, bw, br, bd = c, w, r, d
		}
	}
	return best
}

// ScreeningLOSOFold is one held-out review: the values chosen on the
// other reviews and the review's figures under them.
type ScreeningLOSOFold struct {
	Review string             `json:"review"`
	Chosen map[string]float64 `json:"chosen"`
	WSS95  float64            `json:"wss95"`
	RRF10  float64            `json:"rrf10"`
}

// ScreeningLOSOResult is the leave-one-review-out figure beside the
// scorer's in-sample figure (the defaults) and the baselines, all measured
// in the same run.
type ScreeningLOSOResult struct {
	Folds          []ScreeningLOSOFold `json:"folds"`
	LOSOWSS95      float64             `json:"loso_wss95"`
	LOSORRF10      float64             `json:"loso_rrf10"`
	DefaultWSS95   float64             `json:"default_wss95"`
	DefaultRRF10   float64             `json:"default_rrf10"`
	BaselineWSS95  float64             `json:"baseline_wss95"`
	BaselineRRF10  float64             `json:"baseline_rrf10"`
	Baseline2WSS95 float64             `json:"baseline_double_wss95"`
	Baseline2RRF10 float64             `json:"baseline_double_rrf10"`
}

// screeningJob is one simulation: a review under a method.
type screeningJob struct {
	rev    int
	method ScreeningMethod
	out    *screeningFig
}

// ScreeningLOSO measures the scorer on every review in dir with each of its
// tuned constants chosen leave-one-review-out. Each constant is varied one
// at a time from the defaults, so the figures of every candidate on every
// review (a candidates × reviews matrix) are computed once; each fold then
// picks, per constant, the value best on the other reviews (looPick), and
// the held-out review is simulated with the chosen combination. The
// baselines run in the same pass. It prints one line per review and fold
// and ends with "screening loso: wss95=… rrf10=…" and
// "screening baseline: wss95=… rrf10=…".
func ScreeningLOSO(ctx context.Context, dir string, out io.Writer) (ScreeningLOSOResult, error) {
	names, err := ScreeningReviewNames(dir)
	if err != nil {
		return ScreeningLOSOResult{}, err
	}
	return ScreeningLOSOOf(ctx, dir, names, screeningConstants(), out)
}

// ScreeningLOSOOf is ScreeningLOSO on the named reviews with the given
// constants, so a test can run a small grid.
func ScreeningLOSOOf(ctx context.Context, dir string, names []string, consts []screeningConstant, out io.Writer) (ScreeningLOSOResult, error) {
	var res ScreeningLOSOResult
	revs := make([]ScreeningReview, len(names))
	use := make([]bool, len(names))
	for i, n := range names {
		r, err := ReadScreeningReview(dir, n)
		if err != nil {
			return res, err
		}
		revs[i] = r
		for _, rec := range r.Records {
			use[i] = use[i] || rec.Included
		}
	}
	def := relevance.DefaultTuning()
	tuned := func(t relevance.Tuning) ScreeningMethod {
		return func(in research.ParsedIntent, _ string, papers []research.RawPaper) ScreeningRanker {
			return relevance.NewIndexTuned(in, papers, t)
		}
	}
	nr := len(revs)
	row := func() []screeningFig { return make([]screeningFig, nr) }
	defFigs, base, base2 := row(), row(), row()
	// figs[k][c] is constant k's candidate c on every review; the
	// default's row is shared.
	figs := make([][][]screeningFig, len(consts))
	var jobs []screeningJob
	for r := range revs {
		jobs = append(jobs,
			screeningJob{r, tuned(def), &defFigs[r]},
			screeningJob{r, ScreeningBaseline, &base[r]},
			screeningJob{r, ScreeningBaselineDouble, &base2[r]})
	}
	for k, c := range consts {
		figs[k] = make([][]screeningFig, len(c.values))
		for ci, v := range c.values {
			if v == c.get(def) {
				figs[k][ci] = defFigs
				continue
			}
			figs[k][ci] = row()
			t := def
			c.set(&t, v)
			for r := range revs {
				jobs = append(jobs, screeningJob{r, tuned(t), &figs[k][ci][r]})
			}
		}
	}
	if err := runScreeningJobs(ctx, revs, jobs); err != nil {
		return res, err
	}
	for r, rv := range revs {
		fmt.Fprintf(out, "%s: default wss95=%.1f rrf10=%.1f baseline wss95=%.1f rrf10=%.1f baseline_double wss95=%.1f rrf10=%.1f\n",
			rv.Name, defFigs[r].wss, defFigs[r].rrf, base[r].wss, base[r].rrf, base2[r].wss, base2[r].rrf)
	}
	for k, c := range consts {
		var b strings.Builder
		for ci, v := range c.values {
			w, f := screeningMean(figs[k][ci], use, -1)
			fmt.Fprintf(&b, " %s=%s:%.1f/%.1f", c.name, strconv.FormatFloat(v, 'g', -1, 64), w, f)
		}
		fmt.Fprintf(out, "grid (mean wss95/rrf10 over all reviews, one constant varied):%s\n", b.String())
	}
	// Each fold's chosen combination; a combination equal to the defaults
	// reuses the default run.
	heldFigs := row()
	var heldJobs []screeningJob
	for r, rv := range revs {
		t := def
		fold := ScreeningLOSOFold{Review: rv.Name, Chosen: map[string]float64{}}
		for k, c := range consts {
			ci := looPick(c.values, c.get(def), figs[k], use, r)
			c.set(&t, c.values[ci])
			fold.Chosen[c.name] = c.values[ci]
		}
		res.Folds = append(res.Folds, fold)
		if t == def {
			heldFigs[r] = defFigs[r]
			continue
		}
		heldJobs = append(heldJobs, screeningJob{r, tuned(t), &heldFigs[r]})
	}
	if err := runScreeningJobs(ctx, revs, heldJobs); err != nil {
		return res, err
	}
	for r := range res.Folds {
		f := &res.Folds[r]
		f.WSS95, f.RRF10 = heldFigs[r].wss, heldFigs[r].rrf
		var b strings.Builder
		for _, c := range consts {
			fmt.Fprintf(&b, " %s=%s", c.name, strconv.FormatFloat(f.Chosen[c.name], 'g', -1, 64))
		}
		fmt.Fprintf(out, "loso %s:%s held-out wss95=%.1f rrf10=%.1f\n", f.Review, b.String(), f.WSS95, f.RRF10)
	}
	res.LOSOWSS95, res.LOSORRF10 = screeningMean(heldFigs, use, -1)
	res.DefaultWSS95, res.DefaultRRF10 = screeningMean(defFigs, use, -1)
	res.BaselineWSS95, res.BaselineRRF10 = screeningMean(base, use, -1)
	res.Baseline2WSS95, res.Baseline2RRF10 = screeningMean(base2, use, -1)
	fmt.Fprintf(out, "screening default (in-sample): wss95=%.1f rrf10=%.1f\n", res.DefaultWSS95, res.DefaultRRF10)
	fmt.Fprintf(out, "screening baseline_double: wss95=%.1f rrf10=%.1f\n", res.Baseline2WSS95, res.Baseline2RRF10)
	fmt.Fprintf(out, "screening loso: wss95=%.1f rrf10=%.1f\n", res.LOSOWSS95, res.LOSORRF10)
	fmt.Fprintf(out, "screening baseline: wss95=%.1f rrf10=%.1f\n", res.BaselineWSS95, res.BaselineRRF10)
	return res, nil
}

// screeningMean is the mean WSS@95 and RRF@10 over the reviews in use,
// leaving out review skip (-1 for none).
func screeningMean(figs []screeningFig, use []bool, skip int) (float64, float64) {
	var w, r, n float64
	for i, f := range figs {
		if i == skip || !use[i] {
			continue
		}
		w += f.wss
		r += f.rrf
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return w / n, r / n
}

// runScreeningJobs runs the simulations on up to GOMAXPROCS workers,
// largest reviews first so the last job is short. The figures are final
// at 95% recall, so runs stop there.
func runScreeningJobs(ctx context.Context, revs []ScreeningReview, jobs []screeningJob) error {
	slices.SortStableFunc(jobs, func(a, b screeningJob) int {
		return len(revs[b.rev].Records) - len(revs[a.rev].Records)
	})
	ch := make(chan screeningJob)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				r, err := SimulateScreeningWith(ctx, revs[j.rev], ScreeningOptions{Method: j.method, StopAt95: true})
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					continue
				}
				*j.out = screeningFig{r.WSS95, r.RRF10}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return first
}
