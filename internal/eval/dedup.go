package eval

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
)

// DedupDataset is the deduplicator's score on one labelled file.
type DedupDataset struct {
	Name    string `json:"name"`
	Records int    `json:"records"`
	// RecordLevel is set for files that only flag records as "has a
	// duplicate" (no groups): their scores are per record, not per pair,
	// and they are left out of the pairwise totals.
	RecordLevel bool `json:"record_level,omitempty"`
	// Pairwise counts (RecordLevel false): pairs of records in one true
	// group, pairs the deduplicator put in one cluster, and both.
	TruePairs      int `json:"true_pairs"`
	PredictedPairs int `json:"predicted_pairs"`
	CorrectPairs   int `json:"correct_pairs"`
	// Record-level counts (RecordLevel true): records flagged in the truth,
	// records the deduplicator put in a cluster of two or more, and both.
	Flagged          int `json:"flagged,omitempty"`
	PredictedFlagged int `json:"predicted_flagged,omitempty"`
	CorrectFlagged   int `json:"correct_flagged,omitempty"`

	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// FalsePairs are wrongly merged pairs (or wrongly flagged records), by
	// input ID, for a person to inspect.
	FalsePairs [][2]string `json:"false_pairs,omitempty"`
	// MissedPairs are true duplicate pairs left apart (pairwise files only).
	MissedPairs [][2]string `json:"missed_pairs,omitempty"`
}

// DedupSummary is every file's score and the pairwise totals over the files
// that have duplicate groups, which is what the quality target is set on.
type DedupSummary struct {
	Datasets       []DedupDataset `json:"datasets"`
	TruePairs      int            `json:"true_pairs"`
	PredictedPairs int            `json:"predicted_pairs"`
	CorrectPairs   int            `json:"correct_pairs"`
	Precision      float64        `json:"precision"`
	Recall         float64        `json:"recall"`
	F1             float64        `json:"f1"`
}

// DedupRecord is one labelled input record: the paper as the product sees
// it, and its truth. Group is the duplicate-group ID (equal to the record's
// own ID when it has no duplicate); files without groups leave it empty and
// set Flagged instead.
type DedupRecord struct {
	Paper   research.RawPaper
	Group   string
	Flagged bool
}

// dedupMaxShown caps how many false and missed pairs are printed per file.
const dedupMaxShown = 15

// Dedup scores the product's deduplicator on every *.records.csv.gz in dir
// (format of shared/data/dedup: see its README) and prints one block per
// file and a last line "dedup: precision=P recall=R f1=F" over the files
// with duplicate groups.
func Dedup(ctx context.Context, dir string, out io.Writer) (DedupSummary, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.records.csv.gz"))
	if err != nil {
		return DedupSummary{}, &fault.Error{Code: fault.EInvalid, Message: "bad data directory " + dir, Err: err}
	}
	if len(files) == 0 {
		return DedupSummary{}, fault.Errorf(fault.EInvalid, "no *.records.csv.gz files in %s", dir)
	}
	slices.Sort(files)
	var sum DedupSummary
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".records.csv.gz")
		recs, err := ReadDedupRecords(path)
		if err != nil {
			return DedupSummary{}, err
		}
		ds, err := DedupScore(ctx, name, recs)
		if err != nil {
			return DedupSummary{}, err
		}
		dedupPrint(out, ds, recs)
		sum.Datasets = append(sum.Datasets, ds)
		if !ds.RecordLevel {
			sum.TruePairs += ds.TruePairs
			sum.PredictedPairs += ds.PredictedPairs
			sum.CorrectPairs += ds.CorrectPairs
		}
	}
	sum.Precision, sum.Recall, sum.F1 = dedupPRF(sum.CorrectPairs, sum.PredictedPairs, sum.TruePairs)
	fmt.Fprintf(out, "dedup: precision=%.4f recall=%.4f f1=%.4f\n", sum.Precision, sum.Recall, sum.F1)
	return sum, nil
}

// DedupScore runs the deduplicator on recs and scores its clusters against
// their labels: pairwise when recs carry groups, per record otherwise.
func DedupScore(ctx context.Context, name string, recs []DedupRecord) (DedupDataset, error) {
	return dedupScoreWith(ctx, name, recs, dedup.DefaultThresholds())
}

// scoreClusters scores an analysis of recs against their labels.
func scoreClusters(name string, recs []DedupRecord, a dedup.Analysis) DedupDataset {
	grouped := false
	for _, r := range recs {
		grouped = grouped || r.Group != ""
	}
	ds := DedupDataset{Name: name, Records: len(recs), RecordLevel: !grouped}
	if grouped {
		truth := map[string]int{}
		for _, r := range recs {
			truth[r.Group]++
		}
		for _, n := range truth {
			ds.TruePairs += n * (n - 1) / 2
		}
		for _, c := range a.Clusters {
			ds.PredictedPairs += len(c) * (len(c) - 1) / 2
			byGroup := map[string]int{}
			for _, i := range c {
				byGroup[recs[i].Group]++
			}
			for _, n := range byGroup {
				ds.CorrectPairs += n * (n - 1) / 2
			}
			for x := range c {
				for y := x + 1; y < len(c); y++ {
					if recs[c[x]].Group != recs[c[y]].Group {
						ds.FalsePairs = append(ds.FalsePairs, [2]string{recs[c[x]].Paper.ID, recs[c[y]].Paper.ID})
					}
				}
			}
		}
		clusterOf := make([]int, len(recs))
		for c, members := range a.Clusters {
			for _, i := range members {
				clusterOf[i] = c
			}
		}
		members := map[string][]int{}
		for i, r := range recs {
			members[r.Group] = append(members[r.Group], i)
		}
		for i, r := range recs {
			for _, j := range members[r.Group] {
				if j > i && clusterOf[i] != clusterOf[j] {
					ds.MissedPairs = append(ds.MissedPairs, [2]string{r.Paper.ID, recs[j].Paper.ID})
				}
			}
		}
		ds.Precision, ds.Recall, ds.F1 = dedupPRF(ds.CorrectPairs, ds.PredictedPairs, ds.TruePairs)
		return ds
	}
	for _, c := range a.Clusters {
		for _, i := range c {
			pred := len(c) > 1
			if recs[i].Flagged {
				ds.Flagged++
			}
			if pred {
				ds.PredictedFlagged++
				if recs[i].Flagged {
					ds.CorrectFlagged++
				} else {
					ds.FalsePairs = append(ds.FalsePairs, [2]string{recs[i].Paper.ID, recs[c[0]].Paper.ID})
				}
			}
		}
	}
	ds.Precision, ds.Recall, ds.F1 = dedupPRF(ds.CorrectFlagged, ds.PredictedFlagged, ds.Flagged)
	return ds
}

func dedupPRF(correct, predicted, truth int) (p, r, f float64) {
	p, r = 1, 1
	if predicted > 0 {
		p = float64(correct) / float64(predicted)
	}
	if truth > 0 {
		r = float64(correct) / float64(truth)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return p, r, f
}

func dedupPrint(out io.Writer, ds DedupDataset, recs []DedupRecord) {
	title := map[string]string{}
	for _, r := range recs {
		title[r.Paper.ID] = fmt.Sprintf("%d %.70q", r.Paper.Year, r.Paper.Title)
	}
	if ds.RecordLevel {
		fmt.Fprintf(out, "%s: records=%d record-level (flag only, not in totals) flagged=%d predicted=%d correct=%d precision=%.4f recall=%.4f f1=%.4f false_flags=%d\n",
			ds.Name, ds.Records, ds.Flagged, ds.PredictedFlagged, ds.CorrectFlagged, ds.Precision, ds.Recall, ds.F1, len(ds.FalsePairs))
		for _, fp := range ds.FalsePairs[:min(len(ds.FalsePairs), dedupMaxShown)] {
			fmt.Fprintf(out, "  false flag %s %s (clustered with %s %s)\n", fp[0], title[fp[0]], fp[1], title[fp[1]])
		}
		return
	}
	fmt.Fprintf(out, "%s: records=%d true_pairs=%d predicted_pairs=%d correct_pairs=%d precision=%.4f recall=%.4f f1=%.4f false_pairs=%d missed_pairs=%d\n",
		ds.Name, ds.Records, ds.TruePairs, ds.PredictedPairs, ds.CorrectPairs, ds.Precision, ds.Recall, ds.F1, len(ds.FalsePairs), len(ds.MissedPairs))
	for _, fp := range ds.FalsePairs[:min(len(ds.FalsePairs), dedupMaxShown)] {
		fmt.Fprintf(out, "  false pair %s %s | %s %s\n", fp[0], title[fp[0]], fp[1], title[fp[1]])
	}
	for _, mp := range ds.MissedPairs[:min(len(ds.MissedPairs), dedupMaxShown)] {
		fmt.Fprintf(out, "  missed pair %s %s | %s %s\n", mp[0], title[mp[0]], mp[1], title[mp[1]])
	}
}

// ReadDedupRecords reads one labelled file: the bib-dedupe layout (ID,
// title, author "A and B", journal/booktitle, dup_group…) or the EndNote
// export layout (rec_number, authors "A; B", accession_num, is_duplicate…).
func ReadDedupRecords(path string) ([]DedupRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &fault.Error{Code: fault.ENotFound, Message: "cannot open " + path, Err: err}
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, &fault.Error{Code: fault.EInvalid, Message: path + " is not gzip", Err: err}
	}
	r := csv.NewReader(gz)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, &fault.Error{Code: fault.EInvalid, Message: path + ": no header", Err: err}
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	var recs []DedupRecord
	for line := 2; ; line++ {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("%s: row %d", path, line), Err: err}
		}
		get := func(names ...string) string {
			for _, n := range names {
				if i, ok := col[n]; ok && i < len(row) && strings.TrimSpace(row[i]) != "" {
					return strings.TrimSpace(row[i])
				}
			}
			return ""
		}
		p := research.RawPaper{
			ID:       get("id", "rec_number"),
			Title:    get("title"),
			Authors:  dedupSplitAuthors(get("author", "authors")),
			Year:     dedupYear(get("year")),
			Venue:    get("journal", "booktitle"),
			Volume:   get("volume"),
			Issue:    get("number", "issue"),
			Pages:    get("pages"),
			DOI:      get("doi"),
			Abstract: get("abstract"),
			Source:   get("remote_database_name", "remote_database_provider"),
		}
		// EndNote's accession number is a PMID only for NLM (PubMed) records.
		if acc := get("accession_num"); acc != "" && get("remote_database_provider") == "NLM" && dedupDigits(acc) {
			p.PMID = acc
		}
		if p.ID == "" {
			p.ID = "row" + strconv.Itoa(line)
		}
		recs = append(recs, DedupRecord{Paper: p, Group: get("dup_group"), Flagged: get("is_duplicate") == "1"})
	}
	return recs, nil
}

// dedupSplitAuthors splits "Smith, J and Doe, A" (BibTeX) or
// "Smith, J.; Doe, A." (EndNote) into names.
func dedupSplitAuthors(s string) []string {
	if s == "" {
		return nil
	}
	sep := " and "
	if strings.Contains(s, ";") {
		sep = ";"
	}
	var out []string
	for _, a := range strings.Split(s, sep) {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func dedupYear(s string) int {
	if len(s) < 4 {
		return 0
	}
	y, err := strconv.Atoi(s[:4])
	if err != nil {
		return 0
	}
	return y
}

func dedupDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
