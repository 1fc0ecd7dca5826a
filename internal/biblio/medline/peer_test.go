package medline_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/codecs"
)

// TestPeerFixtures reads other projects' MEDLINE test files (Zotero's
// MEDLINE/nbib translator test cases, nbib's test data; see
// testdata/peers/*/SOURCE.md)
// and compares what Quarry keeps with what those projects expect.
func TestPeerFixtures(t *testing.T) {
	t.Parallel()
	cases := biblitest.ZoteroCases(t, "testdata/peers/zotero/MEDLINEnbib.testCases.json")
	cases = append(cases, biblitest.FileCases(t, "testdata/peers/nbib")...)
	s := biblitest.Score(cases, func(b []byte) ([]biblio.Record, error) {
		o, err := codecs.NewReader(bytes.NewReader(b), "peer", codecs.Options{Format: biblio.MEDLINE})
		if err != nil {
			return nil, err
		}
		return biblitest.ReadRecords(o)
	})
	if testing.Verbose() {
		t.Log(strings.Join(s.Disagreements, "\n"))
		t.Log(s.FieldDisagreement)
	}
	t.Log(s.Line(biblio.MEDLINE))
	fmt.Println(s.Line(biblio.MEDLINE))
	require.Zero(t, s.Lost, "records lost without a report")
	require.Zero(t, s.Expected-s.Stored-s.Reported)
	require.GreaterOrEqual(t, s.Agreement(), 99.0)
}
