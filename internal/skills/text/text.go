// Package text turns titles and abstracts into the features the relevance
// scorer, the organizer and the deduplicator compare: stemmed, stop-word-free
// tokens, bigrams and sparse TF-IDF vectors. It lives apart from the skills
// so that every skill splits words the same way; a paper that matches a
// query in one step must match it in the next.
package text

import (
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"

	"quarry/internal/research"
)

// Term is one word of a text: its stem (what is compared) and the word as
// written, lower-cased (what is shown to people, e.g. in group labels).
type Term struct {
	Stem string
	Word string
}

// Terms splits s into words (runs of letters and digits, so hyphenated
// words split), folds case and accents, drops stop words, one-character
// words and pure numbers, and stems what is left.
func Terms(s string) []Term {
	var out []Term
	forEachWord(s, func(w string) {
		if !keepWord(w) {
			return
		}
		out = append(out, Term{Stem: Stem(w), Word: w})
	})
	return out
}

// Tokenize returns the stems of Terms(s): the unit every comparison uses.
func Tokenize(s string) []string {
	var out []string
	forEachWord(s, func(w string) {
		if keepWord(w) {
			out = append(out, Stem(w))
		}
	})
	return out
}

// Plain splits s like Tokenize but does not stem and keeps numbers: the
// features of the relevance classifier. Stemming merges words a
// classifier should keep apart (drug names, "inhibitor" and "inhibition"),
// and on the screening benchmark unstemmed features rank better
// (mean WSS@95 +2.3); queries and phrase matching still use stems.
func Plain(s string) []string {
	var out []string
	forEachWord(s, func(w string) {
		if len(w) >= 2 && !IsStopword(w) {
			out = append(out, w)
		}
	})
	return out
}

// PlainAll is Plain with stop words kept: every word of two or more
// letters or digits, as scikit-learn's default TF-IDF sees a text. Function
// words carry a study's register ("patients were randomised to" against
// "we review"), and the relevance classifier's unigrams rank better with
// them (screening benchmark: mean WSS@95 +0.5, ACE +2.7); bigrams still
// come from Plain, so "ace inhibitors" stays one pair across a stop word.
func PlainAll(s string) []string {
	var out []string
	forEachWord(s, func(w string) {
		if len(w) >= 2 {
			out = append(out, w)
		}
	})
	return out
}

// Words splits s like Tokenize but keeps stop words and does not stem, so
// phrase matching can show the words the researcher typed.
func Words(s string) []string {
	var out []string
	forEachWord(s, func(w string) { out = append(out, w) })
	return out
}

// Stem reduces an English word to its Porter2 (Snowball) stem, so that
// "blockers", "blocker" and "blocking" compare equal. w should be
// lower-case; words with non-ASCII letters are returned unchanged because
// the English stemmer would mangle them.
func Stem(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] >= 0x80 {
			return w
		}
	}
	return english.Stem(w, true)
}

// Bigrams returns the adjacent pairs of tokens joined by a space. Adding
// them to unigrams lets "heart failure" weigh more than "heart" and
// "failure" apart.
func Bigrams(tokens []string) []string {
	if len(tokens) < 2 {
		return nil
	}
	out := make([]string, 0, len(tokens)-1)
	for i := 1; i < len(tokens); i++ {
		out = append(out, tokens[i-1]+" "+tokens[i])
	}
	return out
}

// WithBigrams returns tokens followed by their bigrams, the feature set the
// scorer uses.
func WithBigrams(tokens []string) []string {
	out := make([]string, 0, 2*len(tokens))
	out = append(out, tokens...)
	return append(out, Bigrams(tokens)...)
}

func keepWord(w string) bool {
	if len(w) < 2 || IsStopword(w) {
		return false
	}
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// forEachWord calls fn with each lower-cased, accent-folded word of s.
func forEachWord(s string, fn func(string)) {
	s = research.FoldAccents(s)
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			fn(b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			// Anything else (space, hyphen, apostrophe, punctuation) ends a
			// word; "patient's" leaves "patient" and a dropped "s".
			flush()
		}
	}
	flush()
}

// ContainsFold reports whether list holds s, ignoring case: the skills
// compare terms people typed ("Deep Learning" and "deep learning" are one
// term), so every list of terms is searched this one way.
func ContainsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// UniqueFold returns list without the later repeats of a term in another
// case, keeping the first spelling and the order.
func UniqueFold(list []string) []string {
	var out []string
	for _, s := range list {
		if !ContainsFold(out, s) {
			out = append(out, s)
		}
	}
	return out
}
