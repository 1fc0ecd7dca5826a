package research

import "unicode/utf8"

// ShortTerms is list without the terms over MaxTermLength. Builders use it
// on what they take from the question and the feedback (quoted phrases and
// free-text cues are not bounded), since one such term in the filters
// would make the whole strategy invalid.
func ShortTerms(list []string) []string {
	var out []string
	for _, s := range list {
		if utf8.RuneCountInString(s) <= MaxTermLength {
			out = append(out, s)
		}
	}
	return out
}
