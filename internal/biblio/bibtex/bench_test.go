package bibtex

import "testing"

// BenchmarkRead100k reports records/s and peak heap for 100,000 entries
// (biblitest.Format.BenchRead100k); peak_heap_MB far below file_MB shows
// the reader streams.
func BenchmarkRead100k(b *testing.B) { format().BenchRead100k(b) }
