package ris_test

import (
	"testing"

	"quarry/internal/biblio/biblitest"
)

// FuzzReader checks the reader's promises on any input and that what was
// read survives write → read unchanged (biblitest.Format.FuzzRoundTrip).
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/*.ris")
	f.Add(format().Write(f, biblitest.Corpus(f)))
	// Reads as "III Smith Jr", whose inverted form reads back differently
	// (see biblitest.Format.InvertsNames).
	f.Add([]byte("TY  - JOUR\nTI  - t\nAU  - Smith, Jr, III\nER  - \n"))
	f.Fuzz(format().FuzzRoundTrip)
}

// BenchmarkRead100k reports records/s and peak heap for 100,000 records
// (biblitest.Format.BenchRead100k); peak_heap_MB far below file_MB shows
// the reader streams.
func BenchmarkRead100k(b *testing.B) { format().BenchRead100k(b) }
