package eval_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/eval"
	"quarry/internal/research"
	"quarry/internal/shareddata"
)

// dedupDataDir is the shared benchmark data; see its README section 1.
var dedupDataDir = shareddata.Dir("dedup")

func TestDedupSharedData(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(dedupDataDir, "stroke.records.csv.gz")); err != nil {
		t.Skipf("dedup benchmark data not present at %s (%v); skipping the quality check", dedupDataDir, err)
	}
	var out bytes.Buffer
	sum, err := eval.Dedup(context.Background(), dedupDataDir, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, `^dedup: precision=\d\.\d{4} recall=\d\.\d{4} f1=\d\.\d{4}$`, lines[len(lines)-1])
	require.Equal(t, 1.0, sum.Precision, "pairwise precision over the labelled sets: no false merge")
	require.GreaterOrEqual(t, sum.Recall, 0.99, "pairwise recall over the labelled sets")
	names := map[string]bool{}
	for _, ds := range sum.Datasets {
		names[ds.Name] = true
		if !ds.RecordLevel {
			require.Len(t, ds.MissedPairs, ds.TruePairs-ds.CorrectPairs, ds.Name)
			require.Len(t, ds.FalsePairs, ds.PredictedPairs-ds.CorrectPairs, ds.Name)
		}
		if ds.Name == "copper" {
			require.True(t, ds.RecordLevel, "copper has flags, not groups")
			require.Empty(t, ds.FalsePairs, "no record flagged that has no duplicate")
		}
	}
	require.True(t, names["cytology_screening"] && names["stroke"] && names["special_cases"], "all labelled sets read: %v", names)
}

// dedupRec is a labelled record for the metric tests.
func dedupRec(id, group, title string, year int, author string) eval.DedupRecord {
	return eval.DedupRecord{Group: group, Paper: research.RawPaper{ID: id, Title: title, Year: year, Authors: []string{author}}}
}

func TestDedupScorePairwise(t *testing.T) {
	t.Parallel()
	const (
		t1 = "Human papillomavirus testing in the follow-up of treated women"
		t2 = "Liquid-based cytology versus conventional smears in cervical screening"
		t3 = "Cost-effectiveness of primary HPV screening in a national programme"
	)
	recs := []eval.DedupRecord{
		// Group a: three copies, one of them unrecognisable (different
		// title), so 1 of 3 true pairs is found.
		dedupRec("1", "a", t1, 2010, "Smith, J"),
		dedupRec("2", "a", strings.ToUpper(t1), 2010, "Smith J"),
		dedupRec("3", "a", "Completely retitled reprint about something else", 2010, "Smith, J"),
		// Group b: one record.
		dedupRec("4", "b", t2, 2011, "Doe, A"),
		// Groups c and d: labelled distinct, but identical: a false pair.
		dedupRec("5", "c", t3, 2012, "Roe, R"),
		dedupRec("6", "d", t3, 2012, "Roe, R"),
	}
	ds, err := eval.DedupScore(context.Background(), "toy", recs)
	require.NoError(t, err)
	require.False(t, ds.RecordLevel)
	require.Equal(t, 3, ds.TruePairs)
	require.Equal(t, 2, ds.PredictedPairs)
	require.Equal(t, 1, ds.CorrectPairs)
	require.InDelta(t, 0.5, ds.Precision, 1e-9)
	require.InDelta(t, 1.0/3, ds.Recall, 1e-9)
	require.InDelta(t, 0.4, ds.F1, 1e-9)
	require.Equal(t, [][2]string{{"5", "6"}}, ds.FalsePairs)
	require.ElementsMatch(t, [][2]string{{"1", "3"}, {"2", "3"}}, ds.MissedPairs)
}

func TestDedupScoreRecordLevel(t *testing.T) {
	t.Parallel()
	const t1 = "Zinc, copper and C-reactive protein in children with severe malaria"
	flag := func(r eval.DedupRecord, f bool) eval.DedupRecord { r.Group, r.Flagged = "", f; return r }
	recs := []eval.DedupRecord{
		flag(dedupRec("1", "", t1, 2013, "Saad, A. A."), true),
		flag(dedupRec("2", "", t1+".", 2013, "Saad AA"), true),
		flag(dedupRec("3", "", "Serum zinc in HIV-infected adults in Southern Nigeria", 2018, "Asemota, E. A."), true),
		flag(dedupRec("4", "", "A trial of zinc supplementation in type 2 diabetes", 2011, "Nct"), false),
	}
	ds, err := eval.DedupScore(context.Background(), "flags", recs)
	require.NoError(t, err)
	require.True(t, ds.RecordLevel)
	require.Equal(t, 3, ds.Flagged)
	require.Equal(t, 2, ds.PredictedFlagged)
	require.Equal(t, 2, ds.CorrectFlagged)
	require.InDelta(t, 1.0, ds.Precision, 1e-9)
	require.InDelta(t, 2.0/3, ds.Recall, 1e-9)
}

func TestDedupReadsBothLayouts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) {
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		gz := gzip.NewWriter(f)
		_, err = gz.Write([]byte(content))
		require.NoError(t, err)
		require.NoError(t, gz.Close())
		require.NoError(t, f.Close())
	}
	write("bib.records.csv.gz", "ID,title,year,author,pages,volume,number,ENTRYTYPE,journal,dup_group\n"+
		"id1,\"Findings to date from the ASCUS-LSIL Triage Study (ALTS)\",2003,\"Schiffman, M and Solomon, D\",946-949,127,,article,Arch Pathol Lab Med,id1\n"+
		"id2,\"Findings to date from the ASCUS-LSIL Triage Study (ALTS). [Review] [23 refs]\",2003,\"Schiffman, M and Solomon, D\",946-9,127,,article,Archives of Pathology & Laboratory Medicine,id1\n"+
		"id3,\"Another study\",2004,\"Solomon, D\",1-2,5,,article,Cancer,id3\n")
	write("endnote.records.csv.gz", "rec_number,ref_type,authors,title,journal,year,volume,number,pages,doi,accession_num,remote_database_name,remote_database_provider,is_duplicate\n"+
		"1,Journal Article,\"Blanc, D. S.; Carrara, Ph\",Copper in hospital water,J Hosp Infect,2005,60,1,69-72,10.1016/j.jhin.2004.10.016,,Embase,,1\n"+
		"2,Journal Article,\"Blanc, D. S.; Carrara, P.\",Copper in hospital water,Journal of Hospital Infection,2005,60,1,69-72,10.1016/J.JHIN.2004.10.016,15823660,,NLM,1\n")
	var out bytes.Buffer
	sum, err := eval.Dedup(context.Background(), dir, &out)
	require.NoError(t, err)
	require.Len(t, sum.Datasets, 2)
	require.Equal(t, "bib", sum.Datasets[0].Name)
	require.Equal(t, 1, sum.Datasets[0].CorrectPairs)
	require.True(t, sum.Datasets[1].RecordLevel)
	require.Equal(t, 2, sum.Datasets[1].CorrectFlagged)
	require.Equal(t, 1, sum.TruePairs, "record-level files stay out of the pairwise totals")
	require.True(t, strings.HasSuffix(out.String(), "dedup: precision=1.0000 recall=1.0000 f1=1.0000\n"), out.String())

	recs, err := eval.ReadDedupRecords(filepath.Join(dir, "endnote.records.csv.gz"))
	require.NoError(t, err)
	require.Equal(t, []string{"Blanc, D. S.", "Carrara, P."}, recs[1].Paper.Authors)
	require.Equal(t, "15823660", recs[1].Paper.PMID, "NLM accession numbers are PMIDs")
	require.Empty(t, recs[0].Paper.PMID)

	_, err = eval.Dedup(context.Background(), t.TempDir(), &out)
	require.Error(t, err, "an empty directory is an error, not a perfect score")
}
