package eval

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
)

// dedupTunable is one of the matcher's thresholds and the values the
// leave-one-set-out harness tries for it, ascending; stricter is the
// direction that merges less (true when a higher value merges less).
type dedupTunable struct {
	name     string
	values   []float64
	stricter bool
	get      func(dedup.Thresholds) float64
	set      func(*dedup.Thresholds, float64)
}

// dedupTunables are every threshold of the matcher that was chosen by
// looking at results. The candidate grids span the plausible range, not
// just the neighbourhood of the defaults.
var dedupTunables = []dedupTunable{
	{"TitleSim", []float64{0.85, 0.88, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98}, true,
		func(t dedup.Thresholds) float64 { return t.TitleSim }, func(t *dedup.Thresholds, v float64) { t.TitleSim = v }},
	{"TitleSimLocated", []float64{0.70, 0.75, 0.80, 0.83, 0.85, 0.88, 0.90, 0.93, 0.95}, true,
		func(t dedup.Thresholds) float64 { return t.TitleSimLocated }, func(t *dedup.Thresholds, v float64) { t.TitleSimLocated = v }},
	{"ShortTitle", []float64{10, 15, 20, 25, 30, 35, 40, 50}, true,
		func(t dedup.Thresholds) float64 { return float64(t.ShortTitle) }, func(t *dedup.Thresholds, v float64) { t.ShortTitle = int(v) }},
	{"TruncatedMin", []float64{20, 30, 40, 50, 60, 80, 100, 150}, true,
		func(t dedup.Thresholds) float64 { return float64(t.TruncatedMin) }, func(t *dedup.Thresholds, v float64) { t.TruncatedMin = int(v) }},
}

// dedupCounts is what one run on one set contributes to a choice: wrong
// merges (pairs, or flags on record-level sets) and right ones.
type dedupCounts struct{ wrong, right int }

// DedupLOSOFold is the outcome for one held-out set: the thresholds
// chosen on the other sets and that set's scores under them.
type DedupLOSOFold struct {
	HeldOut string           `json:"held_out"`
	Chosen  dedup.Thresholds `json:"chosen"`
	Score   DedupDataset     `json:"score"`
}

// DedupLOSOResult is every fold, the pooled held-out pairwise figures and
// the thresholds chosen on all sets (which the defaults should equal).
type DedupLOSOResult struct {
	Folds     []DedupLOSOFold  `json:"folds"`
	Precision float64          `json:"precision"`
	Recall    float64          `json:"recall"`
	AllSets   dedup.Thresholds `json:"all_sets"`
}

// DedupLOSO chooses the matcher's thresholds by leave-one-set-out over
// the labelled sets in dir: for each set, every threshold is chosen on
// the other sets (coordinate by coordinate, from the defaults), and the
// held-out set is scored with what was chosen. A choice minimises wrong
// merges first and maximises right ones second (precision matters more);
// among equally good values it keeps the one nearest the prior default
// (see pick). It prints each candidate's counts on all sets, one line
// per fold and a last line "dedup loso: precision=… recall=…" over the
// pairwise sets.
func DedupLOSO(ctx context.Context, dir string, out io.Writer) (DedupLOSOResult, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.records.csv.gz"))
	if err != nil || len(files) < 2 {
		return DedupLOSOResult{}, fault.Errorf(fault.EInvalid, "leave-one-set-out needs at least two *.records.csv.gz files in %s", dir)
	}
	slices.Sort(files)
	names := make([]string, len(files))
	sets := make([][]DedupRecord, len(files))
	for i, path := range files {
		names[i] = strings.TrimSuffix(filepath.Base(path), ".records.csv.gz")
		if sets[i], err = ReadDedupRecords(path); err != nil {
			return DedupLOSOResult{}, err
		}
	}
	// Scores are cached by thresholds and set: folds share most runs.
	cache := map[string]DedupDataset{}
	score := func(th dedup.Thresholds, set int) (DedupDataset, error) {
		key := fmt.Sprintf("%v|%d", th, set)
		if ds, ok := cache[key]; ok {
			return ds, nil
		}
		ds, err := dedupScoreWith(ctx, names[set], sets[set], th)
		if err != nil {
			return DedupDataset{}, err
		}
		cache[key] = ds
		return ds, nil
	}
	// choose picks the thresholds on every set but skip; with a table it
	// also writes each candidate's wrong/right counts.
	prior := dedup.DefaultThresholds()
	choose := func(skip int, table io.Writer) (dedup.Thresholds, error) {
		th := prior
		for _, tn := range dedupTunables {
			counts := make([]dedupCounts, len(tn.values))
			for v, value := range tn.values {
				try := th
				tn.set(&try, value)
				for s := range sets {
					if s == skip {
						continue
					}
					ds, err := score(try, s)
					if err != nil {
						return th, err
					}
					c := ds.counts()
					counts[v].wrong += c.wrong
					counts[v].right += c.right
				}
			}
			best := pick(tn.values, counts, tn.get(prior), tn.stricter)
			if table != nil {
				fmt.Fprintf(table, "loso: %s candidates (wrong/right on all sets):", tn.name)
				for v, value := range tn.values {
					mark := ""
					if v == best {
						mark = "*"
					}
					fmt.Fprintf(table, " %s%s=%d/%d", mark, strconv.FormatFloat(value, 'f', -1, 64), counts[v].wrong, counts[v].right)
				}
				fmt.Fprintln(table)
			}
			tn.set(&th, tn.values[best])
		}
		return th, nil
	}

	var res DedupLOSOResult
	var correct, predicted, truth int
	for h := range sets {
		th, err := choose(h, nil)
		if err != nil {
			return res, err
		}
		ds, err := score(th, h)
		if err != nil {
			return res, err
		}
		res.Folds = append(res.Folds, DedupLOSOFold{HeldOut: names[h], Chosen: th, Score: ds})
		if ds.RecordLevel {
			fmt.Fprintf(out, "loso: held_out=%s %s record-level precision=%.4f recall=%.4f false_flags=%d\n",
				names[h], thresholdsString(th), ds.Precision, ds.Recall, len(ds.FalsePairs))
			continue
		}
		correct, predicted, truth = correct+ds.CorrectPairs, predicted+ds.PredictedPairs, truth+ds.TruePairs
		fmt.Fprintf(out, "loso: held_out=%s %s precision=%.4f recall=%.4f false_pairs=%d missed_pairs=%d\n",
			names[h], thresholdsString(th), ds.Precision, ds.Recall, len(ds.FalsePairs), len(ds.MissedPairs))
	}
	if res.AllSets, err = choose(-1, out); err != nil {
		return res, err
	}
	res.Precision, res.Recall, _ = dedupPRF(correct, predicted, truth)
	fmt.Fprintf(out, "loso: chosen on all sets %s (defaults %s)\n", thresholdsString(res.AllSets), thresholdsString(dedup.DefaultThresholds()))
	fmt.Fprintf(out, "dedup loso: precision=%.4f recall=%.4f\n", res.Precision, res.Recall)
	return res, nil
}

// counts is the set's contribution to a choice.
func (ds DedupDataset) counts() dedupCounts {
	if ds.RecordLevel {
		return dedupCounts{wrong: ds.PredictedFlagged - ds.CorrectFlagged, right: ds.CorrectFlagged}
	}
	return dedupCounts{wrong: ds.PredictedPairs - ds.CorrectPairs, right: ds.CorrectPairs}
}

// pick returns the index of the best candidate: fewest wrong merges,
// then most right ones. Among ties it keeps the candidate nearest prior
// (the value set before any data was looked at), the stricter one if two
// are as near: where the labelled sets cannot tell values apart, they are
// no reason to move a threshold.
func pick(values []float64, counts []dedupCounts, prior float64, stricter bool) int {
	best := 0
	for i := 1; i < len(counts); i++ {
		c, b := counts[i], counts[best]
		switch {
		case c.wrong < b.wrong || c.wrong == b.wrong && c.right > b.right:
			best = i
		case c == b:
			di, db := math.Abs(values[i]-prior), math.Abs(values[best]-prior)
			if di < db-1e-9 || math.Abs(di-db) <= 1e-9 && stricter { // values ascend: i is the stricter
				best = i
			}
		}
	}
	return best
}

func thresholdsString(th dedup.Thresholds) string {
	var parts []string
	for _, tn := range dedupTunables {
		parts = append(parts, tn.name+"="+strconv.FormatFloat(tn.get(th), 'f', -1, 64))
	}
	return strings.Join(parts, " ")
}

// dedupScoreWith is DedupScore with other thresholds.
func dedupScoreWith(ctx context.Context, name string, recs []DedupRecord, th dedup.Thresholds) (DedupDataset, error) {
	papers := make([]research.RawPaper, len(recs))
	for i, r := range recs {
		papers[i] = r.Paper
	}
	a, err := dedup.AnalyzeWith(ctx, papers, th)
	if err != nil {
		return DedupDataset{}, err
	}
	return scoreClusters(name, recs, a), nil
}
