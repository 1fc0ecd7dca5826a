package codecs_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// samples are records as a run exports them: marks and notes, every
// locator, odd characters, and a preprint.
func samples() []biblio.Record {
	recs := []biblio.Record{
		{Type: biblio.Article, Mark: biblio.Relevant, Note: "key trial; check dosage", Keywords: []string{"exercise", "depression"},
			Paper: research.RawPaper{Title: "Effect of exercise on depression: 50% fewer relapses & more", Authors: []string{"José Álvarez", "Ludwig van Beethoven"},
				Year: 2019, Venue: "Journal of Ageing Research", Volume: "12", Issue: "3", Pages: "101-110",
				Abstract: "Background: we randomised 200 adults.\n\nResults: fewer relapses.", DOI: "10.1234/jar.2019.001", PMID: "31234567", URL: "https://example.org/a"}},
		{Type: biblio.Preprint, Mark: biblio.Irrelevant,
			Paper: research.RawPaper{Title: "Attention is all you need", Authors: []string{"Ashish Vaswani", "Noam Shazeer"}, Year: 2017, Venue: "arXiv", ArxivID: "1706.03762", URL: "https://arxiv.org/abs/1706.03762"}},
		{Type: biblio.Conference,
			Paper: research.RawPaper{Title: "A paper with {braces} and a_b", Authors: []string{"Martin Luther King Jr."}, Year: 2020, Venue: "Proceedings of KDD"}},
	}
	for i := range recs {
		biblio.Finish(&recs[i])
	}
	return recs
}

// readAll reads every record and requires each to be readable.
func readAll(t *testing.T, r biblio.Reader) []biblio.Record {
	t.Helper()
	out := biblitest.ReadAll(t, r)
	for _, rec := range out {
		require.Empty(t, rec.Problem, "line %d", rec.Line)
	}
	return out
}

// TestEveryExportFormatRoundTripsAndIsDetected writes the samples in each
// export format, then reads them back without naming the format: detection
// must recognise what Quarry itself writes, and the records must come back
// whole, marks and notes included.
func TestEveryExportFormatRoundTripsAndIsDetected(t *testing.T) {
	t.Parallel()
	for _, format := range append(codecs.ExportFormats, biblio.JSONL) {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, codecs.WriteAll(&buf, format, samples()))
			in, err := codecs.NewReader(bytes.NewReader(buf.Bytes()), "x", codecs.Options{})
			require.NoError(t, err)
			require.Equal(t, format, in.Format)
			got := readAll(t, in)
			want := samples()
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, biblio.Comparable(want[i]), biblio.Comparable(got[i]))
			}
		})
	}
}

func TestGzipAndErrors(t *testing.T) {
	t.Parallel()
	var plain bytes.Buffer
	require.NoError(t, codecs.WriteAll(&plain, biblio.RIS, samples()))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(plain.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	in, err := codecs.NewReader(&gz, "x.ris.gz", codecs.Options{})
	require.NoError(t, err)
	require.Equal(t, biblio.RIS, in.Format)
	require.Len(t, readAll(t, in), 3)
	require.NoError(t, in.Close())

	_, err = codecs.NewReader(strings.NewReader("plain prose, nothing else\n"), "notes.txt", codecs.Options{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "notes.txt")
	_, err = codecs.NewReader(strings.NewReader(""), "x", codecs.Options{Format: "docx"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	_, err = codecs.NewWriter(io.Discard, "docx")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))

	empty, err := codecs.NewReader(strings.NewReader("\n"), "empty", codecs.Options{})
	require.NoError(t, err, "an empty file can be opened; it has no records (library import refuses it)")
	require.Empty(t, readAll(t, empty))
	require.True(t, empty.Empty)
	require.True(t, empty.Detected)
	var gzEmpty bytes.Buffer
	require.NoError(t, gzip.NewWriter(&gzEmpty).Close())
	empty, err = codecs.NewReader(&gzEmpty, "empty.ris.gz", codecs.Options{Format: "ris"})
	require.NoError(t, err)
	require.True(t, empty.Empty, "empty after gzip, even with a format given")
	require.False(t, empty.Detected)

	// A forced format wins over detection.
	in, err = codecs.NewReader(bytes.NewReader(plain.Bytes()), "x.txt", codecs.Options{Format: "ris"})
	require.NoError(t, err)
	require.Equal(t, biblio.RIS, in.Format)
	require.False(t, in.Detected)
	require.False(t, in.Empty)
	wrong, err := codecs.NewReader(bytes.NewReader(plain.Bytes()), "x.ris", codecs.Options{Format: "bibtex"})
	require.NoError(t, err)
	require.Empty(t, readAll(t, wrong), "RIS read as BibTeX has no records")
	require.False(t, wrong.Empty, "but it is not empty")
}

func TestFormatForPath(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"merged.ris": biblio.RIS, "refs.BIB": biblio.BibTeX, "zotero.json": biblio.CSLJSON, "pubmed.nbib": biblio.MEDLINE,
		"sheet.csv": biblio.CSV, "corpus.jsonl.gz": biblio.JSONL, "out.docx": "",
	} {
		require.Equal(t, want, codecs.FormatForPath(path), path)
	}
}

// TestUnknownFormatNamesEveryFormat: a missing or unknown format is refused
// naming exactly the formats the readers and writers accept.
func TestUnknownFormatNamesEveryFormat(t *testing.T) {
	t.Parallel()
	all := strings.Join(biblio.Formats, ", ")
	for _, name := range []string{"", "docx"} {
		err := codecs.UnknownFormat(name)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
		require.Contains(t, fault.ErrorMessage(err), all, name)
		require.Contains(t, fault.ErrorFields(err)["format"], all, name)
	}
	for _, f := range biblio.Formats {
		_, err := codecs.NewWriter(io.Discard, f)
		require.NoError(t, err, "%s is listed, so it can be written", f)
	}
}

// TestExportsKeepNameParticlesWithTheFamilyName: "Hans P. A. Van Dongen"
// is Van Dongen in every format's author output, never "Dongen, Hans P. A.
// Van" (as the exports wrote it when only lower-case particles counted).
func TestExportsKeepNameParticlesWithTheFamilyName(t *testing.T) {
	t.Parallel()
	rec := biblio.Record{Type: biblio.Article, Paper: research.RawPaper{
		Title: "Sleep deprivation and cognition", Authors: []string{"Hans P. A. Van Dongen", "Maria De La Cruz"}, Year: 2003, Venue: "Sleep"}}
	for _, format := range biblio.Formats {
		var buf bytes.Buffer
		require.NoError(t, codecs.WriteAll(&buf, format, []biblio.Record{rec}), format)
		out := buf.String()
		require.NotContains(t, out, "Dongen, Hans P. A. Van", format)
		require.NotContains(t, out, "Cruz, Maria De La", format)
		require.Contains(t, out, "Van Dongen", format)
		require.Contains(t, out, "De La Cruz", format)
		switch format {
		case biblio.CSLJSON:
			require.Contains(t, out, `"family":"Van Dongen"`, format)
		case biblio.JSONL:
		default:
			require.Contains(t, out, "Van Dongen, H", format)
		}
	}
}

// TestEncodings: the text is decoded before any format reader sees it, so
// a GBK BibTeX file reads 凯撒 (it read "¿­Èö"), a UTF-16 RIS file is
// detected and read, and a named encoding is used as given.
func TestEncodings(t *testing.T) {
	t.Parallel()
	bib := "@article{kaisa2020,\n  title = {凯撒密码在古典密码学中的应用研究},\n  author = {张伟 and 李娜},\n  journal = {计算机科学与技术学报},\n  year = {2020}\n}\n"
	gbk, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(bib))
	require.NoError(t, err)
	o, err := codecs.NewReader(bytes.NewReader(gbk), "gbk.bib", codecs.Options{})
	require.NoError(t, err)
	require.Equal(t, biblio.BibTeX, o.Format)
	require.Equal(t, "gb18030", o.Encoding)
	rec, err := o.Next()
	require.NoError(t, err)
	require.Equal(t, "凯撒密码在古典密码学中的应用研究", rec.Paper.Title)

	ris := "TY  - JOUR\nTI  - Überblick\nAU  - Müller, Jürgen\nPY  - 2020\nER  - \n"
	u16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(ris))
	require.NoError(t, err)
	o, err = codecs.NewReader(bytes.NewReader(u16), "utf16.ris", codecs.Options{})
	require.NoError(t, err)
	require.Equal(t, biblio.RIS, o.Format)
	rec, err = o.Next()
	require.NoError(t, err)
	require.Equal(t, "Überblick", rec.Paper.Title)

	o, err = codecs.NewReader(bytes.NewReader(gbk), "gbk.bib", codecs.Options{Encoding: "gbk"})
	require.NoError(t, err)
	rec, err = o.Next()
	require.NoError(t, err)
	require.Equal(t, []string{"张伟", "李娜"}, rec.Paper.Authors)

	_, err = codecs.NewReader(bytes.NewReader(gbk), "gbk.bib", codecs.Options{Encoding: "klingon"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

// TestSharedExtraAcrossFormats: the fields every format keeps in Extra
// under the shared keys (publisher, place, ISBN/ISSN, editors, language,
// edition, series) are written by each writer and read back by its
// reader, so a paper imported from one format exports to another with
// them. MEDLINE has no series tag.
func TestSharedExtraAcrossFormats(t *testing.T) {
	t.Parallel()
	rec := biblio.Record{Type: biblio.Chapter, Paper: research.RawPaper{Title: "A chapter", Authors: []string{"Jane Doe"}, Year: 2019, Venue: "The Book"}}
	shared := map[string]string{
		biblio.ExtraPublisher: "Springer", biblio.ExtraAddress: "Cham", biblio.ExtraISBN: "978-3-030-12345-6",
		biblio.ExtraEditor: "Editor, Ed and Other, Olga", biblio.ExtraLanguage: "en", biblio.ExtraEdition: "2", biblio.ExtraSeries: "Lecture Notes",
	}
	biblio.SetExtra(&rec, shared)
	biblio.Finish(&rec)
	for _, format := range []string{biblio.RIS, biblio.MEDLINE, biblio.WoS} {
		var buf bytes.Buffer
		require.NoError(t, codecs.WriteAll(&buf, format, []biblio.Record{rec}))
		o, err := codecs.NewReader(&buf, "x", codecs.Options{Format: format})
		require.NoError(t, err)
		back, err := o.Next()
		require.NoError(t, err)
		got := biblio.ExtraFields(back)
		for k, v := range shared {
			if format == biblio.MEDLINE && k == biblio.ExtraSeries {
				continue
			}
			require.Equal(t, v, got[k], "%s: %s", format, k)
		}
	}
}
