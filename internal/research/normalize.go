package research

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"

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
