package library_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/store"
)

func readAll(t *testing.T, r *library.Reader) []library.Record {
	t.Helper()
	var out []library.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, rec)
	}
}

// TestReaderKeepsWhatTheFileSaid: the format packages map fields (and have
// their own tests); the library reader adds the origin and keeps what the
// papers table has no column for — the format's own extras, the type,
// keywords, a mark and a note — in Extra, and passes problems through with
// their lines.
func TestReaderKeepsWhatTheFileSaid(t *testing.T) {
	t.Parallel()
	r, err := library.Open("testdata/arxiv_sample.jsonl", codecs.Options{})
	require.NoError(t, err)
	defer r.Close()
	recs := readAll(t, r)
	require.Len(t, recs, 4)
	require.Equal(t, "arxiv_sample.jsonl", recs[0].Origin)
	require.Equal(t, "arxiv:2503.11731", recs[0].Paper.ID)
	var extra map[string]any
	require.NoError(t, json.Unmarshal(recs[0].Extra, &extra))
	require.Equal(t, map[string]any{"categories": []any{"cs.CV", "cs.RO"}, "first_listed": "2025-03-18", "times_listed": float64(2), "type": "preprint"}, extra)
	require.Equal(t, 3, recs[2].Line)
	require.Equal(t, "malformed JSON", recs[2].Problem)

	ris := "TY  - CONF\nTI  - Tagged paper\nKW  - sleep\nKW  - memory\nN1  - Quarry mark: relevant; seminal\nER  - \n"
	r, err = library.NewReader(strings.NewReader(ris), "tagged.ris", codecs.Options{})
	require.NoError(t, err)
	recs = readAll(t, r)
	require.Len(t, recs, 1)
	require.Equal(t, "tagged.ris", recs[0].Origin)
	extra = nil
	require.NoError(t, json.Unmarshal(recs[0].Extra, &extra))
	require.Equal(t, map[string]any{"type": "conference", "keywords": []any{"sleep", "memory"}, "mark": "relevant", "note": "seminal"}, extra)
}

func TestReaderDetectsGzipAndRejectsOtherFormats(t *testing.T) {
	t.Parallel()
	plain, err := os.ReadFile("testdata/paperlists_sample.jsonl")
	require.NoError(t, err)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err = w.Write(plain)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	r, err := library.NewReader(bytes.NewReader(gz.Bytes()), "x.data", codecs.Options{})
	require.NoError(t, err)
	recs := readAll(t, r)
	require.NoError(t, r.Close())
	require.Len(t, recs, 6)
	require.Equal(t, "Flash3D: Feed-Forward Generalisable 3D Scene Reconstruction from a Single Image", recs[0].Paper.Title)

	// A gzip stream cut short is a read error, not a quietly shorter import.
	r, err = library.NewReader(bytes.NewReader(gz.Bytes()[:gz.Len()/2]), "cut.jsonl.gz", codecs.Options{})
	require.NoError(t, err)
	var readErr error
	for readErr == nil {
		_, readErr = r.Next()
	}
	require.NotErrorIs(t, readErr, io.EOF)

	r, err = library.NewReader(strings.NewReader("@article{x, title={BibTeX}}\n"), "refs.bib", codecs.Options{})
	require.NoError(t, err)
	require.Equal(t, "bibtex", r.Format(), "the format is detected from content")
	_, err = library.NewReader(strings.NewReader("just some prose\n"), "notes.txt", codecs.Options{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "cannot tell the file's format")
	_, err = library.NewReader(strings.NewReader(""), "x", codecs.Options{Format: "docx"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	_, err = library.Open(filepath.Join(t.TempDir(), "missing.jsonl"), codecs.Options{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

func TestImportFilesIntoStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "lib.db"), store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	defer st.Close()
	files := []string{"testdata/arxiv_sample.jsonl", "testdata/paperlists_sample.jsonl"}
	var last library.Progress
	stats, err := library.ImportFiles(ctx, st, files, codecs.Options{}, library.ImportOptions{BatchSize: 2, Progress: func(p library.Progress) { last = p }})
	require.NoError(t, err)
	require.Equal(t, 10, stats.Read)
	require.Equal(t, 5, stats.Inserted)
	require.Equal(t, 1, stats.Updated, "the ACL record has the arXiv ID of an arXiv listing: same paper")
	require.Equal(t, 4, stats.Skipped)
	require.Equal(t, stats.Read, stats.Inserted+stats.Updated+stats.Unchanged+stats.Skipped)
	require.Equal(t, "1 malformed JSON, 1 missing title, 1 status Reject, 1 status Withdraw", stats.ReasonSummary())
	require.Equal(t, []research.RecordError{
		{Origin: "arxiv_sample.jsonl", Line: 3, Reason: "malformed JSON"},
		{Origin: "paperlists_sample.jsonl", Line: 6, Reason: "missing title"},
	}, stats.Errors)
	require.True(t, last.Indexing)

	got, err := st.SearchLibrary(ctx, `"fraud"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "doi:10.1145/3292500.3330000", got[0].ID)
	got, err = st.SearchLibrary(ctx, `"unsafe" AND "weights"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "ACL", got[0].Venue, "the later record's venue wins")
	require.NotEmpty(t, got[0].Abstract, "its empty abstract keeps the arXiv one")
	got, err = st.SearchLibrary(ctx, `"rejected"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = st.SearchLibrary(ctx, `"muller"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1, "author names are indexed without diacritics")

	// Re-importing the same files changes nothing: four records are
	// unchanged; the arXiv and ACL records of one paper both count as
	// updates, since the arXiv one's venue replaces the stored "ACL" and
	// the ACL one puts it back.
	again, err := library.ImportFiles(ctx, st, files, codecs.Options{}, library.ImportOptions{})
	require.NoError(t, err)
	require.Equal(t, 0, again.Inserted)
	require.Equal(t, 2, again.Updated)
	require.Equal(t, 4, again.Unchanged)
	n, err := st.LibraryCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, n)
}

// TestFileWithoutRecordsIsRefused: a file that yields no record at all,
// readable or not, is an EInvalid error naming the file instead of an
// import that "succeeds" with nothing imported: an empty upload, or a file
// read in the wrong format (RIS forced to BibTeX finds no "@").
func TestFileWithoutRecordsIsRefused(t *testing.T) {
	t.Parallel()
	const ris = "TY  - JOUR\nTI  - A RIS paper\nER  - \n"
	tests := []struct {
		name, file, content, format string
		want                        string
	}{
		{"Empty", "empty.ris", "", "", "empty.ris is empty: there are no records to import"},
		{"BlankLines", "blank.ris", "\n \r\n", "ris", "blank.ris is empty: there are no records to import"},
		{"WrongFormatChosen", "refs.ris", ris, "bibtex", "refs.ris: no records found reading it as bibtex (the format chosen); check that the file is in that format, or choose the one it is in (bibtex, ris, csljson, medline, csv, jsonl, wos)"},
		{"HeaderOnlyCSV", "sheet.csv", "title,year,doi\n", "", "sheet.csv: no records found reading it as csv (detected from its content)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := library.NewReader(strings.NewReader(tt.content), tt.file, codecs.Options{Format: tt.format})
			require.NoError(t, err)
			_, err = r.Next()
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
			require.ErrorContains(t, err, tt.want)

			_, err = library.ReadAll(strings.NewReader(tt.content), tt.file, codecs.Options{Format: tt.format}, 10)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.ErrorContains(t, err, tt.want)
		})
	}

	// A file whose only record is unreadable has a record to report: it
	// ends normally, and the import lists the bad line.
	r, err := library.NewReader(strings.NewReader("{not json\n"), "bad.jsonl", codecs.Options{Format: "jsonl"})
	require.NoError(t, err)
	recs := readAll(t, r)
	require.Len(t, recs, 1)
	require.Equal(t, "malformed JSON", recs[0].Problem)
}

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "lib.db"), store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// TestImportFilesRefusesAFileWithoutRecords: ImportFiles (quarry import)
// fails on a file without records, even after a good one, and leaves the
// library as it was.
func TestImportFilesRefusesAFileWithoutRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	empty, ris := filepath.Join(dir, "empty.ris"), filepath.Join(dir, "refs.ris")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	require.NoError(t, os.WriteFile(ris, []byte("TY  - JOUR\nTI  - A RIS paper\nER  - \n"), 0o644))
	st := openStore(t)
	for name, tc := range map[string]struct {
		files  []string
		format string
		want   string
	}{
		"Empty":          {[]string{empty}, "", "empty.ris is empty"},
		"WrongFormat":    {[]string{ris}, "bibtex", "refs.ris: no records found reading it as bibtex"},
		"EmptyAfterGood": {[]string{"testdata/arxiv_sample.jsonl", empty}, "", "empty.ris is empty"},
	} {
		stats, err := library.ImportFiles(ctx, st, tc.files, codecs.Options{Format: tc.format}, library.ImportOptions{BatchSize: 2})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%s: %v", name, err)
		require.ErrorContains(t, err, tc.want, name)
		require.Zero(t, stats.Inserted+stats.Updated, name)
	}
	n, err := st.LibraryCount(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing was imported")
}

// TestJobsStart: the web upload's background import refuses a file without
// records (or with unmappable CSV columns) before it starts, so the form
// can say why, and removes the spooled upload; a readable file imports
// every record, the first one Start read included.
func TestJobsStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	type observation struct {
		stats library.ImportStats
		took  time.Duration
		err   error
	}
	var observed []observation // jobs.Wait orders the observer's writes before the reads below
	jobs := library.NewJobs(ctx, st, func(stats library.ImportStats, took time.Duration, err error) {
		observed = append(observed, observation{stats, took, err})
	})
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		content, format, want string
	}{
		"Empty":        {"", "", "upload.ris is empty"},
		"WrongFormat":  {"TY  - JOUR\nTI  - A RIS paper\nER  - \n", "bibtex", "no records found reading it as bibtex (the format chosen)"},
		"NoTitleInCSV": {"Name,Year\nx,2020\n", "csv", "no title column"},
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
		_, err := jobs.Start(path, "upload.ris", library.Importer{By: "Ada"}, codecs.Options{Format: tc.format}, true)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%s: %v", name, err)
		require.ErrorContains(t, err, tc.want, name)
		require.NoFileExists(t, path, "%s: the spooled upload is removed", name)
	}
	require.Empty(t, jobs.List(), "no job was started")

	id, err := jobs.Start("testdata/arxiv_sample.jsonl", "arxiv_sample.jsonl", library.Importer{By: "Ada"}, codecs.Options{}, false)
	require.NoError(t, err)
	jobs.Wait()
	status, err := jobs.Status(id)
	require.NoError(t, err)
	require.Empty(t, status.Err)
	require.Equal(t, 4, status.Progress.Read, "the record Start read first is imported too")
	require.Equal(t, 3, status.Progress.Inserted)
	require.Equal(t, 1, status.Progress.Skipped)
	require.Len(t, observed, 1, "only the started job is observed, once")
	require.NoError(t, observed[0].err)
	require.Equal(t, 3, observed[0].stats.Inserted)
	require.GreaterOrEqual(t, observed[0].took, time.Duration(0))
	n, err := st.LibraryCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
}
