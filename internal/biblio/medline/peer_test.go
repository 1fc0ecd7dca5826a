package medline_test

import (
	"io"
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
	s := biblitest.ScoreFormat(t, biblio.MEDLINE, cases, func(r io.Reader) (biblio.Reader, error) {
		return codecs.NewReader(r, "peer", codecs.Options{Format: biblio.MEDLINE})
	})
	require.GreaterOrEqual(t, s.Agreement(), 99.0)
}
