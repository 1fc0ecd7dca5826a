package ris_test

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

// TestPeerFixtures reads other projects' RIS test files (Zotero's RIS
// translator test cases, rispy's test data; see testdata/peers/*/SOURCE.md)
// and compares what Quarry keeps with what those projects expect.
func TestPeerFixtures(t *testing.T) {
	t.Parallel()
	cases := biblitest.ZoteroCases(t, "testdata/peers/zotero/RIS.testCases.json")
	cases = append(cases, biblitest.FileCases(t, "testdata/peers/rispy")...)
	s := biblitest.Score(cases, func(b []byte) ([]biblio.Record, error) {
		o, err := codecs.NewReader(bytes.NewReader(b), "peer", codecs.Options{Format: biblio.RIS})
		if err != nil {
			return nil, err
		}
		return biblitest.ReadRecords(o)
	})
	if testing.Verbose() {
		t.Log(strings.Join(s.Disagreements, "\n"))
		t.Log(s.FieldDisagreement)
	}
	t.Log(s.Line(biblio.RIS))
	fmt.Println(s.Line(biblio.RIS))
	require.Zero(t, s.Lost, "records lost without a report")
	// The target, 99%, is reached (99.2%). What remains is Zotero's
	// mapping of EndNote's and Reference Manager's rarer types (a bill's
	// sponsor or a recording's performers as its creators, a book's
	// volume in IS), which Quarry does not follow.
	require.GreaterOrEqual(t, s.Agreement(), 99.0)
	require.Zero(t, s.Expected-s.Stored-s.Reported)
}
