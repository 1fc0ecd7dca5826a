package bibtex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/biblio"
)

// bibName splits one name of an author or editor list the way BibTeX
// does, so the record keeps the file's split: "Last, First", "von Last,
// Jr, First", "First von Last" (the von part is the lower-case words, so
// "Jason Van Hulse" is Hulse, Jason Van, as BibTeX itself reads it), and a
// name that is one braced group ({National Nurses United}) is an
// organisation, kept whole. Each part is decoded from LaTeX.
func bibName(raw string) biblio.Name {
	raw = strings.TrimSpace(raw)
	parts := splitTop(raw, func(s string, i int) int {
		if s[i] == ',' {
			return 1
		}
		return 0
	})
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	dec := func(s string) string { return strings.Join(strings.Fields(decodeText(s, false)), " ") }
	switch len(parts) {
	case 1:
	case 2:
		return biblio.Name{Last: dec(parts[0]), First: dec(parts[1])}
	default:
		return biblio.Name{Last: dec(parts[0]), Suffix: dec(parts[1]), First: dec(strings.Join(parts[2:], ", "))}
	}
	if isGroup(raw) {
		return biblio.Name{Literal: dec(raw)}
	}
	words := nameWords(raw)
	n := len(words)
	if n <= 1 {
		return biblio.Name{Last: dec(raw)}
	}
	von := -1
	for i, w := range words[:n-1] {
		if lowerWord(w) {
			von = i
			break
		}
	}
	if von < 0 {
		return biblio.Name{First: dec(strings.Join(words[:n-1], " ")), Last: dec(words[n-1])}
	}
	if von == 0 {
		if !particles[strings.ToLower(words[0])] && allLower(words) {
			// "sudhin jacob": a person who typed the name without
			// capitals, not a von part with no first name.
			return biblio.Name{First: dec(strings.Join(words[:n-1], " ")), Last: dec(words[n-1])}
		}
		// No first name: "van Gogh".
		return biblio.Name{Last: dec(strings.Join(words, " "))}
	}
	return biblio.Name{First: dec(strings.Join(words[:von], " ")), Last: dec(strings.Join(words[von:], " "))}
}

// isGroup reports whether s is one braced group from its first byte to
// its last.
func isGroup(s string) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 && i < len(s)-1 {
				return false
			}
		}
	}
	return depth == 0
}

// unwrapGroup takes off braces around the whole value: Web of Science
// writes DOI = {{10.1016/...}} and Keywords = {{a; b}}.
func unwrapGroup(s string) string {
	s = strings.TrimSpace(s)
	for isGroup(s) {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// nameWords splits a name at blanks and ties (~) outside braces.
func nameWords(s string) []string {
	var out []string
	for _, w := range splitTop(s, func(s string, i int) int {
		if isSpace(s[i]) || s[i] == '~' {
			return 1
		}
		return 0
	}) {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// lowerWord tells a von-part word, by BibTeX's rule: the first letter
// outside braces decides; a special character ({\"u}ber) counts as the
// letter it stands for; a word whose letters are all inside braces ({Van})
// is not lower case; a command's own name counts (\BB{b} is upper case).
func lowerWord(w string) bool {
	depth := 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '{' && depth == 0 && i+1 < len(w) && w[i+1] == '\\':
			d := decoder{s: w[i:]}
			inner := d.group()
			r, _ := utf8.DecodeRuneInString(decodeText(inner, false))
			return unicode.IsLower(r)
		case c == '{':
			depth++
		case c == '}':
			depth--
		case depth > 0:
		case c == '\\':
			for i+1 < len(w) && !isLetter(w[i+1]) && w[i+1] != '{' {
				i++
			}
		default:
			r, size := utf8.DecodeRuneInString(w[i:])
			if unicode.IsLetter(r) {
				return unicode.IsLower(r)
			}
			i += size - 1
		}
	}
	return false
}

// particles are the name prefixes of European family names: a name in
// lower case that starts with one is read as BibTeX reads it, all family
// ("van gogh"), and otherwise as a first name and a family name.
var particles = map[string]bool{
	"van": true, "von": true, "de": true, "der": true, "den": true, "del": true, "della": true,
	"di": true, "da": true, "das": true, "dos": true, "du": true, "la": true, "le": true,
	"ten": true, "ter": true, "zu": true, "zur": true, "y": true, "bin": true, "ibn": true,
	"al": true, "el": true, "af": true, "av": true, "st.": true, "des": true, "d'": true,
}

// allLower reports whether every word of a name is lower case, so no word
// can anchor BibTeX's von rule.
func allLower(words []string) bool {
	for _, w := range words {
		if !lowerWord(w) {
			return false
		}
	}
	return true
}
