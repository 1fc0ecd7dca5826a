package biblio

import (
	"encoding/json"
	"strings"
)

// Extra keys every format uses for the bibliographic fields RawPaper has no
// column for, so a publisher read from RIS's PB is written back as
// BibTeX's publisher, CSL's publisher and RIS's PB alike: an export and
// re-import in any format keeps them. Values are strings. Format-specific
// leftovers keep their own names next to these (bibtex_key, ...).
const (
	ExtraPublisher = "publisher"
	ExtraAddress   = "address" // place of publication (RIS CY, CSL publisher-place)
	ExtraISBN      = "isbn"
	ExtraISSN      = "issn"
	// ExtraEditor holds the editors in BibTeX's form, "Last, First and
	// Last, First" (SplitEditors and JoinEditors convert).
	ExtraEditor   = "editor"
	ExtraEdition  = "edition"
	ExtraSeries   = "series"
	ExtraLanguage = "language"
)

// ExtraFields decodes the string-valued entries of r.Extra (nil when there
// are none); entries of other JSON types are left out.
func ExtraFields(r Record) map[string]string {
	if len(r.Extra) == 0 {
		return nil
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(r.Extra, &raw) != nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil && s != "" {
			out[k] = s
		}
	}
	return out
}

// SetExtra sets string entries of r.Extra (an empty value removes the
// key), keeping the entries already there, whatever their type.
func SetExtra(r *Record, kv map[string]string) {
	m := map[string]any{}
	if len(r.Extra) > 0 {
		_ = json.Unmarshal(r.Extra, &m)
	}
	for k, v := range kv {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	if len(m) == 0 {
		r.Extra = nil
		return
	}
	b, err := json.Marshal(m)
	if err == nil {
		r.Extra = b
	}
}

// SplitEditors reads ExtraEditor's value into names.
func SplitEditors(s string) []Name {
	var out []Name
	for _, part := range splitAnd(s) {
		if n := ParseName(part); n.Display() != "" {
			out = append(out, n)
		}
	}
	return out
}

// JoinEditors renders names as ExtraEditor's value.
func JoinEditors(names []Name) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if v := n.Inverted(); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " and ")
}

// splitAnd splits at " and " (BibTeX's name separator, any case).
func splitAnd(s string) []string {
	var out []string
	words := []rune(s)
	start := 0
	for i := 0; i+5 <= len(words); i++ {
		if (words[i] == ' ') && (words[i+4] == ' ') && equalFoldASCII(string(words[i+1:i+4]), "and") {
			out = append(out, string(words[start:i]))
			start = i + 5
			i += 4
		}
	}
	return append(out, string(words[start:]))
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// NamesToKeep is r's author split when guessing it again from the display
// forms (GuessName) would get any name wrong, nil otherwise: what a store
// or a lossless format must keep besides the display forms.
func NamesToKeep(r Record) []Name {
	if len(r.Names) != len(r.Paper.Authors) && len(r.Paper.AuthorNames) != len(r.Paper.Authors) {
		return nil // nothing but the display forms: the guess is all there is
	}
	names := NamesOf(r)
	for i, n := range names {
		if !GuessName(r.Paper.Authors[i]).Same(n) {
			return names
		}
	}
	return nil
}

// GuessName splits a display-form name no file split for us: a name of
// several words with a word organisations use ("Eyened Reading Center",
// "PRISMA Group") is kept whole, anything else is read by ParseName.
func GuessName(display string) Name {
	words := strings.Fields(display)
	if len(words) > 1 {
		for _, w := range words {
			if orgWords[strings.ToLower(strings.Trim(w, ",.()"))] {
				return Name{Literal: strings.Join(words, " ")}
			}
		}
	}
	return ParseName(display)
}

// orgWords mark an organisation's name.
var orgWords = map[string]bool{
	"organization": true, "organisation": true, "association": true, "society": true,
	"institute": true, "university": true, "consortium": true, "committee": true,
	"group": true, "collaboration": true, "council": true, "agency": true,
	"foundation": true, "network": true, "ministry": true, "department": true,
	"team": true, "inc": true, "ltd": true, "corporation": true, "center": true,
	"centre": true, "alliance": true, "federation": true, "commission": true,
	"office": true, "board": true, "panel": true, "project": true, "investigators": true,
}

// Same says whether n and o are the same name: equal, or both a name kept
// whole (a Literal, or a family name with no given name or suffix, which
// every format writes and reads back whole).
func (n Name) Same(o Name) bool {
	return n.whole() == o.whole()
}

func (n Name) whole() Name {
	if n.Literal == "" && n.First == "" && n.Suffix == "" && n.Last != "" {
		return Name{Literal: n.Last}
	}
	return n
}
