package textindex

import (
	"fmt"
	"testing"
)

// BenchmarkTokenize tokenizes the titles and abstracts of both shared
// corpora (~170k records) with one reused Tokenizer, as an import would,
// and prints one figure line.
func BenchmarkTokenize(b *testing.B) {
	texts := readCorpus(b, 1<<30)
	bytes := 0
	for _, s := range texts {
		bytes += len(s)
	}
	var tok Tokenizer
	tokens := 0
	emit := func(string) { tokens++ }
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range texts {
			tok.Tokens(s, emit)
		}
	}
	perS := float64(tokens) / b.Elapsed().Seconds()
	b.ReportMetric(perS, "tokens/s")
	fmt.Printf("textindex: tokenize_tokens_per_s=%.0f (texts=%d bytes=%d tokens_per_pass=%d passes=%d)\n",
		perS, len(texts), bytes, tokens/b.N, b.N)
}
