package wos_test

import (
	"testing"

	"quarry/internal/biblio/biblitest"
)

// FuzzReader checks the reader's promises on any input and that what was
// read survives write → read unchanged (biblitest.Format.FuzzRoundTrip).
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/peers/rispy/*.ris")
	f.Add([]byte(export))
	f.Add(format().Write(f, biblitest.Corpus(f)))
	f.Fuzz(format().FuzzRoundTrip)
}
