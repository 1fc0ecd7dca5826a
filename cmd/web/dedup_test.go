package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
)

// Two exports of overlapping searches, as a reviewer gets them from PubMed
// (RIS) and from Zotero (CSL-JSON): one paper shares a DOI, one is the same
// paper typed differently with no identifier, one appears only once.
const dedupRIS = `TY  - JOUR
AU  - Smith, John
TI  - Effect of exercise on depression in older adults: a randomised trial
PY  - 2019
T2  - Journal of Ageing Research
DO  - 10.1234/jar.2019.001
N1  - Quarry mark: relevant; key trial
ER  - 

TY  - JOUR
AU  - Brown, Alice
AU  - Green, Bob
TI  - Yoga and anxiety: a systematic review
PY  - 2021
T2  - Mind and Body
ER  - 

TY  - JOUR
AU  - Lee, Chris
TI  - Only in PubMed: tai chi for balance
PY  - 2018
ER  - 
`

const dedupCSL = `[
{"id":"a","type":"article-journal","title":"Effect of Exercise on Depression in Older Adults: A Randomised Trial","author":[{"family":"Smith","given":"J."}],"issued":{"date-parts":[[2019]]},"DOI":"https://doi.org/10.1234/JAR.2019.001","abstract":"We randomised 200 adults."},
{"id":"b","type":"article-journal","title":"Yoga and Anxiety - A Systematic Review","author":[{"family":"Brown","given":"Alice"},{"family":"Green","given":"Bob"}],"issued":{"date-parts":[[2021]]},"container-title":"Mind and Body","volume":"12"},
{"id":"c","type":"article-journal","title":"Only in Zotero: swimming and sleep","author":[{"family":"Kim","given":"Dana"}],"issued":{"date-parts":[[2022]]}}
]
`

func TestDedupCommandMergesFilesAndReportsEveryMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ris := filepath.Join(dir, "pubmed.ris")
	csl := filepath.Join(dir, "zotero.json")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	require.NoError(t, os.WriteFile(csl, []byte(dedupCSL), 0o644))
	out := filepath.Join(dir, "merged.ris")

	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"dedup", "--out", out, ris, csl}, func(string) string { return "" }, nil, &stdout, io.Discard))
	require.Contains(t, stdout.String(), "read 6 records from 2 files")
	require.Contains(t, stdout.String(), "wrote 4 to "+out)

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	format, recs := readMerged(t, f)
	require.Equal(t, biblio.RIS, format, "--out's extension picks the format")
	byTitle := map[string]biblio.Record{}
	for _, r := range recs {
		byTitle[r.Paper.Title] = r
	}
	require.Len(t, byTitle, 4)
	var trial biblio.Record
	for title, r := range byTitle {
		if r.Paper.DOI != "" {
			trial = r
			require.Contains(t, title, "xercise")
		}
	}
	require.Equal(t, "We randomised 200 adults.", trial.Paper.Abstract, "the merged record keeps the richest metadata of both")
	require.Equal(t, biblio.Relevant, trial.Mark, "and the researcher's mark")
	require.Equal(t, "key trial", trial.Note)

	rep, err := os.Open(filepath.Join(dir, "merged.merges.csv"))
	require.NoError(t, err)
	defer rep.Close()
	rows, err := csv.NewReader(rep).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "header and one row per merge")
	require.Equal(t, []string{"decision", "reason", "score", "detail", "file_a", "line_a", "title_a"}, rows[0][:7])
	reasons := map[string][]string{}
	for _, r := range rows[1:] {
		require.Equal(t, "merged", r[0])
		reasons[r[1]] = r
	}
	require.Contains(t, reasons, "same_doi")
	require.Equal(t, []string{"pubmed.ris", "1"}, reasons["same_doi"][4:6], "each side names its file and line")
	require.Contains(t, reasons, "fuzzy", "the yoga review has no identifier and matches on title, year and authors")
	require.NotEmpty(t, reasons["fuzzy"][3], "a fuzzy merge carries its evidence")
}

// readMerged reads dedup's output, detecting its format, and checks that
// every record in it is readable.
func readMerged(t *testing.T, r io.Reader) (string, []biblio.Record) {
	t.Helper()
	in, err := codecs.NewReader(r, "merged", codecs.Options{})
	require.NoError(t, err)
	var out []biblio.Record
	for {
		rec, err := in.Next()
		if err == io.EOF {
			return in.Format, out
		}
		require.NoError(t, err)
		require.Empty(t, rec.Problem)
		out = append(out, rec)
	}
}

func TestDedupCommandRejectsBadInvocations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ris := filepath.Join(dir, "a.ris")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	for name, args := range map[string][]string{
		"NoFiles":      {"dedup", "--out", filepath.Join(dir, "m.ris")},
		"NoOut":        {"dedup", ris},
		"UnknownOut":   {"dedup", "--out", filepath.Join(dir, "m.docx"), ris},
		"MissingInput": {"dedup", "--out", filepath.Join(dir, "m.ris"), filepath.Join(dir, "nope.ris")},
	} {
		err := run(context.Background(), args, func(string) string { return "" }, nil, io.Discard, io.Discard)
		require.Error(t, err, name)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), name)
	}
	_, err := os.Stat(filepath.Join(dir, "m.ris"))
	require.True(t, os.IsNotExist(err), "a failed run leaves no output file")
}
