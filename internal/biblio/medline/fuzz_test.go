package medline_test

import (
	"testing"
)

// FuzzReader checks the reader's promises on any input and that what was
// read survives write → read unchanged (biblitest.Format.FuzzRoundTrip).
func FuzzReader(f *testing.F) {
	format().AddSeeds(f, "testdata/*.*")
	f.Add(format().Write(f, records(f)))
	f.Fuzz(format().FuzzRoundTrip)
}

// BenchmarkRead100k reports records/s and peak heap for 100,000 records
// (biblitest.Format.BenchRead100k); peak_heap_MB far below file_MB shows
// the reader streams.
func BenchmarkRead100k(b *testing.B) { format().BenchRead100k(b) }
