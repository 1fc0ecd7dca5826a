package views

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// A segment is a run of a paper's text, marked when it matches one of the
// question's terms. Pages render segments as text nodes (templ escapes
// them), so a title can never inject markup however it is highlighted.
type segment struct {
	Text string
	Mark bool
}

// minPrefix is the shortest term that also matches longer words it
// begins ("memory" marks "memory" only; "cognit" marks "cognition" and
// "cognitive"): a short term such as "rat" would otherwise light up
// "rate" and "ratio".
const minPrefix = 5

// highlight splits text into segments, marking every match of terms: a
// term matches case-insensitively at the start of a word, its words
// separated by spaces or hyphens in the text ("sleep loss" matches
// "sleep-loss"); a term of minPrefix letters or more, or ending in "*",
// also matches the words it begins. Where terms overlap the longest match
// wins. Quotes and boolean operators in terms are ignored.
func highlight(text string, terms []string) []segment {
	pats := highlightPatterns(terms)
	if text == "" {
		return nil
	}
	if len(pats) == 0 {
		return []segment{{Text: text}}
	}
	rs := []rune(text)
	var out []segment
	plain := 0
	for i := 0; i < len(rs); {
		if !isWordRune(rs[i]) || i > 0 && isWordRune(rs[i-1]) {
			i++
			continue
		}
		end := 0
		for _, p := range pats {
			if e := p.match(rs, i); e > end {
				end = e
			}
		}
		if end == 0 {
			i++
			continue
		}
		if plain < i {
			out = append(out, segment{Text: string(rs[plain:i])})
		}
		out = append(out, segment{Text: string(rs[i:end]), Mark: true})
		i, plain = end, end
	}
	if plain < len(rs) {
		out = append(out, segment{Text: string(rs[plain:])})
	}
	return out
}

// pattern is one term as highlight matches it: its words, lower-cased,
// and whether its last word may begin a longer one.
type pattern struct {
	words  [][]rune
	prefix bool
}

// highlightPatterns turns terms into patterns, without repeats, longest
// first.
func highlightPatterns(terms []string) []pattern {
	var out []pattern
	seen := map[string]bool{}
	for _, t := range terms {
		t = strings.TrimSpace(t)
		wild := strings.HasSuffix(t, "*")
		var words [][]rune
		n := 0
		for w := range strings.FieldsFuncSeq(strings.ToLower(t), func(r rune) bool { return !isWordRune(r) }) {
			switch w {
			case "and", "or", "not":
				if len(words) == 0 {
					continue // a boolean operator, not a word to find
				}
			}
			words = append(words, []rune(w))
			n += len([]rune(w))
		}
		if len(words) == 0 || n < 2 {
			continue
		}
		key := strings.ToLower(t)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, pattern{words: words, prefix: wild || len(words[len(words)-1]) >= minPrefix})
	}
	slices.SortStableFunc(out, func(a, b pattern) int { return cmp.Compare(b.length(), a.length()) })
	return out
}

func (p pattern) length() int {
	n := 0
	for _, w := range p.words {
		n += len(w)
	}
	return n
}

// match returns where p's match starting at rune i of rs ends, or 0.
func (p pattern) match(rs []rune, i int) int {
	for k, w := range p.words {
		if k > 0 {
			// Words are separated by at least one space or hyphen.
			j := i
			for j < len(rs) && j-i < 3 && (unicode.IsSpace(rs[j]) || rs[j] == '-' || rs[j] == '‐') {
				j++
			}
			if j == i {
				return 0
			}
			i = j
		}
		if i+len(w) > len(rs) {
			return 0
		}
		for x, r := range w {
			if unicode.ToLower(rs[i+x]) != r {
				return 0
			}
		}
		i += len(w)
		if k == len(p.words)-1 && p.prefix {
			for i < len(rs) && isWordRune(rs[i]) {
				i++
			}
		}
		if i < len(rs) && isWordRune(rs[i]) {
			return 0 // the word goes on: "rat" in "rate"
		}
	}
	return i
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
