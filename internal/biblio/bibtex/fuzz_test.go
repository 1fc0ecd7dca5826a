package bibtex

import "testing"

// FuzzReader checks the reader's promises on any input and that writing
// what was read and reading it again gives the same records
// (biblitest.Format.FuzzRoundTrip; see the package doc for why that holds:
// the writer escapes exactly what the reader interprets).
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/*.bib")
	f.Fuzz(format().FuzzRoundTrip)
}
