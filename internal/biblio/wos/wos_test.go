package wos_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/codecs"
	"quarry/internal/biblio/wos"
)

// format is Web of Science plain text for the shared harness: values are
// wrapped, so an abstract, URL or note comes back with its white space
// collapsed, and keywords are written "; " apart, so one with a semicolon
// comes back split; an untyped record is written as Misc.
func format() biblitest.Format {
	f := biblitest.New(wos.NewReader, wos.NewWriter)
	f.Carried = func(r biblio.Record) biblio.Record {
		c := biblitest.UntypedAsMisc(r)
		c.Paper.Abstract = strings.Join(strings.Fields(c.Paper.Abstract), " ")
		c.Paper.URL = strings.Join(strings.Fields(c.Paper.URL), " ")
		c.Paper.ArxivID = strings.Join(strings.Fields(c.Paper.ArxivID), " ")
		c.Note = strings.Join(strings.Fields(c.Note), " ")
		var kws []string
		for _, k := range c.Keywords {
			for _, part := range strings.Split(k, ";") {
				if part = strings.Join(strings.Fields(part), " "); part != "" {
					kws = append(kws, part)
				}
			}
		}
		c.Keywords = kws
		return c
	}
	f.LinePerRecord = true
	f.InvertsNames = true
	return f
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	_, out := format().RoundTrip(t, biblitest.Corpus(t))
	require.True(t, bytes.HasPrefix(out, []byte("FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\n")))
	require.True(t, bytes.HasSuffix(out, []byte("ER\n\nEF\n")))
}

const export = "\ufeffFN Clarivate Analytics Web of Science\nVR 1.0\n" +
	"PT J\nAU Wong Kee Song, LM\n   El Khoury, R\nAF Wong Kee Song, Louis M.\n   El Khoury, Rita\nCA National Nurses United\n" +
	"TI A title wrapped\n   over two lines\nSO JOURNAL OF TESTS\nLA English\nDT Article\nDE alpha; beta\nID GAMMA\n" +
	"AB An abstract\n   continued.\nC1 [Wong Kee Song, LM] Mayo Clin.\n   [El Khoury, R] AUB.\nPU ELSEVIER\nPI AMSTERDAM\nSN 0000-0001\n" +
	"PD FEB\nPY 2011\nVL 77\nIS 3\nBP 732\nEP 738\nDI 10.1128/AEM.02132-10\nPM 21131518\nUT WOS:000286597100004\nER\n\n" +
	"PT B\nAU Doe, J\nTI A chapter\nSO A BOOK\nBE Editor, Ed\nDT Book Chapter\nPY Year\nAR e123\nER\n\nEF\n"

// TestReadsPlainTextExport: the plain-text export is detected and read:
// continuation lines, the name split from AF, group authors whole,
// keywords from DE and ID, extra fields kept and written back; a year
// that is not one is a warning.
func TestReadsPlainTextExport(t *testing.T) {
	t.Parallel()
	require.Equal(t, biblio.WoS, biblio.Detect([]byte(export)))
	o, err := codecs.NewReader(strings.NewReader(export), "savedrecs.txt", codecs.Options{})
	require.NoError(t, err)
	require.Equal(t, biblio.WoS, o.Format)
	recs, err := biblitest.ReadRecords(o)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	// Chosen as RIS, as people do, it is still read as what it is.
	o, err = codecs.NewReader(strings.NewReader(export), "savedrecs.txt", codecs.Options{Format: biblio.RIS})
	require.NoError(t, err)
	require.Equal(t, biblio.WoS, o.Format)
	r := recs[0]
	require.Empty(t, r.Problem)
	require.Equal(t, 3, r.Line)
	require.Equal(t, "A title wrapped over two lines", r.Paper.Title)
	require.Equal(t, []biblio.Name{{Last: "Wong Kee Song", First: "Louis M."}, {Last: "El Khoury", First: "Rita"}, {Literal: "National Nurses United"}}, r.Names)
	require.Equal(t, biblio.Article, r.Type)
	require.Equal(t, "JOURNAL OF TESTS", r.Paper.Venue)
	require.Equal(t, 2011, r.Paper.Year)
	require.Equal(t, "732-738", r.Paper.Pages)
	require.Equal(t, "10.1128/AEM.02132-10", r.Paper.DOI)
	require.Equal(t, "21131518", r.Paper.PMID)
	require.Equal(t, []string{"alpha", "beta", "GAMMA"}, r.Keywords)
	ex := biblio.ExtraFields(r)
	require.Equal(t, "ELSEVIER", ex[biblio.ExtraPublisher])
	require.Equal(t, "AMSTERDAM", ex[biblio.ExtraAddress])
	require.Equal(t, "0000-0001", ex[biblio.ExtraISSN])
	require.Equal(t, "WOS:000286597100004", ex["wos_UT"])
	c := recs[1]
	require.Empty(t, c.Problem)
	require.Equal(t, biblio.Chapter, c.Type)
	require.Equal(t, "A BOOK", c.Paper.Venue)
	require.Equal(t, "e123", c.Paper.Pages)
	require.Equal(t, "Editor, Ed", biblio.ExtraFields(c)[biblio.ExtraEditor])
	require.Equal(t, []string{`year "Year" is not a year; imported without a year`}, c.Warnings)

	back := format().Read(t, format().Write(t, recs))
	require.Len(t, back, 2)
	for i := range recs {
		require.Equal(t, recs[i].Paper, back[i].Paper)
		require.Equal(t, recs[i].Names, back[i].Names)
		require.Equal(t, biblio.ExtraFields(recs[i]), biblio.ExtraFields(back[i]))
	}
}

// TestPeerFixtures reads other projects' Web of Science test files
// (Zotero's "Web of Science Tagged" translator test cases, rispy's
// example_wos.ris; see testdata/peers/*/SOURCE.md) and compares what
// Quarry keeps with what those projects expect.
func TestPeerFixtures(t *testing.T) {
	t.Parallel()
	cases := biblitest.ZoteroCases(t, "testdata/peers/zotero/Web of Science Tagged.testCases.json")
	cases = append(cases, biblitest.FileCases(t, "testdata/peers/rispy")...)
	s := biblitest.ScoreFormat(t, biblio.WoS, cases, func(r io.Reader) (biblio.Reader, error) {
		return codecs.NewReader(r, "peer", codecs.Options{})
	})
	require.GreaterOrEqual(t, s.Agreement(), 99.0)
}

// TestExtraAndNamesRoundTripAnyOrder: whatever tags a file holds, in any
// order, the names' split and every kept field survive write → read.
func TestExtraAndNamesRoundTripAnyOrder(t *testing.T) {
	t.Parallel()
	format().ExtraRoundTrip(t, []string{"PT J\n", "PT B\n", "PT C\n", "PT P\n", "PT S\n", "ER\n", "EF\n", "FN x\n",
		"AU Doe, J\n", "   Roe, R\n", "AF Doe, Jane\n", "TI t\n", "   more\n", "\n", "PY 20x\n", "BE Ed, E\n", "CA Group\n",
		"DE a; b\n", "ZZ q\n", "C1 addr\n", "AR 1\n", "BP 1\n", "PU P\n", "PI C\n", "SN 1234-5678\n", "BN 978\n", "UT WOS:1\n",
		"DT Book Chapter\n", "DT Review\n", "DT Article\n", "DT Patent\n", "AU YANG Y\n"}, 5000)
}
