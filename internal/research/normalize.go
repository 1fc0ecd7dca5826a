package research

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

var (
	doiPrefix   = regexp.MustCompile(`(?i)^(https?://(dx\.)?doi\.org/|doi:\s*)`)
	arxivPrefix = regexp.MustCompile(`(?i)^(https?://arxiv\.org/(abs|pdf)/|arxiv:\s*)`)
	arxivVer    = regexp.MustCompile(`v\d+$`)
)

// NormalizeDOI lower-cases a DOI and strips resolver prefixes, so that
// "https://doi.org/10.1/ABC" and "doi:10.1/abc" compare equal. It returns ""
// for anything that does not look like a DOI.
func NormalizeDOI(s string) string {
	s = strings.TrimSpace(s)
	s = doiPrefix.ReplaceAllString(s, "")
	s = strings.ToLower(strings.TrimRight(s, ". "))
	if !strings.HasPrefix(s, "10.") || !strings.Contains(s, "/") {
		return ""
	}
	return s
}

// NormalizeArxivID strips URL prefixes and the version suffix.
func NormalizeArxivID(s string) string {
	s = strings.TrimSpace(s)
	s = arxivPrefix.ReplaceAllString(s, "")
	s = strings.TrimSuffix(s, ".pdf")
	s = arxivVer.ReplaceAllString(s, "")
	return strings.ToLower(s)
}

// NormalizeTitle folds case, accents and punctuation so that the same title
// typed by two databases compares equal.
func NormalizeTitle(s string) string {
	s = norm.NFKD.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := true
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	return strings.TrimSpace(b.String())
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// FoldAccents removes combining marks, so "naïve" and "naive" are one word
// wherever words are compared: in the skills' tokens and in the library's
// compounds.
func FoldAccents(s string) string {
	if isASCII(s) {
		return s
	}
	d := norm.NFKD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Compounds returns the joined form of every hyphenated word of s, lower-
// cased and accent-folded: "Pre-training" gives "pretraining", "COVID-19"
// gives "covid19". Writers hyphenate compounds inconsistently, and a
// tokenizer that splits on hyphens never matches "pretraining" against
// "pre-training"; indexing the joined form beside the parts makes both
// spellings find each other. It lives here because the library's index
// (the store), the local query renderer and the relevance scorer must all
// join words the same way. Pure numbers ("2015-2020") are left out.
func Compounds(s string) []string {
	if !strings.ContainsAny(s, hyphenish) {
		return nil // most titles and many abstracts: nothing to join
	}
	s = FoldAccents(s)
	var out []string
	start, end, parts, letters := -1, 0, 0, false
	flush := func() {
		if parts > 1 && letters {
			out = append(out, joinedLower(s[start:end]))
		}
		start, parts, letters = -1, 0, false
	}
	prevWord := false // the previous rune ended a word part
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
			if !prevWord {
				parts++
			}
			letters = letters || unicode.IsLetter(r)
			prevWord = true
			end = i + utf8.RuneLen(r)
		case isHyphen(r) && prevWord && i+utf8.RuneLen(r) < len(s) && startsWord(s[i+utf8.RuneLen(r):]):
			prevWord = false // the compound goes on after the hyphen
		default:
			flush()
			prevWord = false
		}
	}
	flush()
	return out
}

// hyphenish are the runes that are, or fold (NFKD) to, a hyphen isHyphen
// accepts: a text without any has no compound.
const hyphenish = "-\u2010\u2011\ufe63\uff0d"

// joinedLower is a compound's parts lower-cased and joined: its letters
// and digits without the hyphens between them.
func joinedLower(compound string) string {
	var b strings.Builder
	b.Grow(len(compound))
	for _, r := range compound {
		if !isHyphen(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// isHyphen reports whether r joins the parts of a compound: the ASCII
// hyphen-minus and Unicode's hyphen and non-breaking hyphen.
func isHyphen(r rune) bool { return r == '-' || r == '\u2010' || r == '\u2011' }

func startsWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
