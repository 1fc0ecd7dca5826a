package textindex

// This file ports FTS5's porter stemmer (fts5PorterCb and its generated
// steps in SQLite's ext/fts5/fts5_tokenize.c) rule for rule, quirks
// included, because ranking parity with FTS5 depends on every stem being
// the same. Notable quirks kept on purpose:
//   - tokens shorter than 3 or longer than 64 bytes pass through unstemmed;
//   - non-ASCII tokens are not passed through: their bytes are simply
//     consonants to the rules (so "東京s" becomes "東京", while "жылing"
//     keeps its "ing" for want of a vowel);
//   - a suffix only matches when something precedes it (nBuf > len).

// Token length limits of fts5PorterCb (FTS5_PORTER_MAX_TOKEN): outside
// them a token is indexed as the base tokenizer produced it.
const (
	porterMinToken = 3
	porterMaxToken = 64
)

// porterStem stems the token in b[:n] in place (b has room for n+1 bytes;
// step 1b may add an 'e') and returns the new length.
func porterStem(b []byte, n int) int {
	// Step 1a.
	if b[n-1] == 's' {
		if b[n-2] == 'e' {
			if (n > 4 && b[n-4] == 's' && b[n-3] == 's') || (n > 3 && b[n-3] == 'i') {
				n -= 2
			} else {
				n--
			}
		} else if b[n-2] != 's' {
			n--
		}
	}

	// Step 1b.
	n, ok := porterStep1B(b, n)
	if ok {
		if m, ok := porterStep1B2(b, n); ok {
			n = m
		} else {
			c := b[n-1]
			if !porterIsVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == at(b, n-2) {
				n--
			} else if porterMEq1(b[:n]) && porterOstar(b[:n]) {
				b[n] = 'e'
				n++
			}
		}
	}

	// Step 1c.
	if b[n-1] == 'y' && porterHasVowel(b[:n-1]) {
		b[n-1] = 'i'
	}

	n = porterStep2(b, n)
	n = porterStep3(b, n)
	n = porterStep4(b, n)

	// Step 5a.
	if b[n-1] == 'e' {
		if porterMGt1(b[:n-1]) || (porterMEq1(b[:n-1]) && !porterOstar(b[:n-1])) {
			n--
		}
	}

	// Step 5b.
	if n > 1 && b[n-1] == 'l' && b[n-2] == 'l' && porterMGt1(b[:n-1]) {
		n--
	}
	return n
}

// at reads b[i], and 0 before the start: fts5PorterCb may read one byte
// before its buffer when a stem is a single byte, where the C struct holds
// a pointer's high byte (zero on the platforms we run); no token byte is 0.
func at(b []byte, i int) byte {
	if i < 0 {
		return 0
	}
	return b[i]
}

func porterIsVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || (yIsVowel && c == 'y')
}

// porterGobbleVC skips one vowel run then one consonant run and returns
// the index after the first consonant of the latter (plus one), or 0 when
// there is no such VC sequence (fts5PorterGobbleVC).
func porterGobbleVC(s []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(s); i++ {
		cons = !porterIsVowel(s[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(s); i++ {
		cons = !porterIsVowel(s[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

// porterMGt0 is the rule condition m > 0.
func porterMGt0(s []byte) bool { return porterGobbleVC(s, false) != 0 }

// porterMGt1 is the rule condition m > 1.
func porterMGt1(s []byte) bool {
	n := porterGobbleVC(s, false)
	return n != 0 && porterGobbleVC(s[n:], true) != 0
}

// porterMEq1 is the rule condition m = 1.
func porterMEq1(s []byte) bool {
	n := porterGobbleVC(s, false)
	return n != 0 && porterGobbleVC(s[n:], true) == 0
}

// porterOstar is the rule condition *o: the stem ends consonant, vowel,
// consonant, the last not w, x or y.
func porterOstar(s []byte) bool {
	last := s[len(s)-1]
	if last == 'w' || last == 'x' || last == 'y' {
		return false
	}
	mask := 0
	cons := false
	for _, c := range s {
		cons = !porterIsVowel(c, cons)
		mask <<= 1
		if cons {
			mask++
		}
	}
	return mask&7 == 5
}

// porterMGt1SorT is the rule condition m > 1 and (*s or *t).
func porterMGt1SorT(s []byte) bool {
	last := s[len(s)-1]
	return (last == 's' || last == 't') && porterMGt1(s)
}

// porterHasVowel is the rule condition *v*.
func porterHasVowel(s []byte) bool {
	for i, c := range s {
		if porterIsVowel(c, i > 0) {
			return true
		}
	}
	return false
}

// ends reports whether b[:n] ends in suffix with at least one byte before
// it, the test of every generated porter rule.
func ends(b []byte, n int, suffix string) bool {
	return n > len(suffix) && string(b[n-len(suffix):n]) == suffix
}

// replace swaps the suffix of length drop at the end of b[:n] for out when
// cond holds on the stem, and returns the new length.
func replace(b []byte, n, drop int, out string, cond func([]byte) bool) int {
	stem := n - drop
	if !cond(b[:stem]) {
		return n
	}
	copy(b[stem:], out)
	return stem + len(out)
}

func porterStep1B(b []byte, n int) (int, bool) {
	switch at(b, n-2) {
	case 'e':
		if ends(b, n, "eed") {
			if porterMGt0(b[:n-3]) {
				return n - 1, false // "eed" -> "ee"
			}
		} else if ends(b, n, "ed") {
			if porterHasVowel(b[:n-2]) {
				return n - 2, true
			}
		}
	case 'n':
		if ends(b, n, "ing") {
			if porterHasVowel(b[:n-3]) {
				return n - 3, true
			}
		}
	}
	return n, false
}

func porterStep1B2(b []byte, n int) (int, bool) {
	switch at(b, n-2) {
	case 'a':
		if ends(b, n, "at") {
			return copy(b[n-2:], "ate") + n - 2, true
		}
	case 'b':
		if ends(b, n, "bl") {
			return copy(b[n-2:], "ble") + n - 2, true
		}
	case 'i':
		if ends(b, n, "iz") {
			return copy(b[n-2:], "ize") + n - 2, true
		}
	}
	return n, false
}

func porterStep2(b []byte, n int) int {
	switch at(b, n-2) {
	case 'a':
		if ends(b, n, "ational") {
			return replace(b, n, 7, "ate", porterMGt0)
		} else if ends(b, n, "tional") {
			return replace(b, n, 6, "tion", porterMGt0)
		}
	case 'c':
		if ends(b, n, "enci") {
			return replace(b, n, 4, "ence", porterMGt0)
		} else if ends(b, n, "anci") {
			return replace(b, n, 4, "ance", porterMGt0)
		}
	case 'e':
		if ends(b, n, "izer") {
			return replace(b, n, 4, "ize", porterMGt0)
		}
	case 'g':
		if ends(b, n, "logi") {
			return replace(b, n, 4, "log", porterMGt0)
		}
	case 'l':
		if ends(b, n, "bli") {
			return replace(b, n, 3, "ble", porterMGt0)
		} else if ends(b, n, "alli") {
			return replace(b, n, 4, "al", porterMGt0)
		} else if ends(b, n, "entli") {
			return replace(b, n, 5, "ent", porterMGt0)
		} else if ends(b, n, "eli") {
			return replace(b, n, 3, "e", porterMGt0)
		} else if ends(b, n, "ousli") {
			return replace(b, n, 5, "ous", porterMGt0)
		}
	case 'o':
		if ends(b, n, "ization") {
			return replace(b, n, 7, "ize", porterMGt0)
		} else if ends(b, n, "ation") {
			return replace(b, n, 5, "ate", porterMGt0)
		} else if ends(b, n, "ator") {
			return replace(b, n, 4, "ate", porterMGt0)
		}
	case 's':
		if ends(b, n, "alism") {
			return replace(b, n, 5, "al", porterMGt0)
		} else if ends(b, n, "iveness") {
			return replace(b, n, 7, "ive", porterMGt0)
		} else if ends(b, n, "fulness") {
			return replace(b, n, 7, "ful", porterMGt0)
		} else if ends(b, n, "ousness") {
			return replace(b, n, 7, "ous", porterMGt0)
		}
	case 't':
		if ends(b, n, "aliti") {
			return replace(b, n, 5, "al", porterMGt0)
		} else if ends(b, n, "iviti") {
			return replace(b, n, 5, "ive", porterMGt0)
		} else if ends(b, n, "biliti") {
			return replace(b, n, 6, "ble", porterMGt0)
		}
	}
	return n
}

func porterStep3(b []byte, n int) int {
	switch at(b, n-2) {
	case 'a':
		if ends(b, n, "ical") {
			return replace(b, n, 4, "ic", porterMGt0)
		}
	case 's':
		if ends(b, n, "ness") {
			return replace(b, n, 4, "", porterMGt0)
		}
	case 't':
		if ends(b, n, "icate") {
			return replace(b, n, 5, "ic", porterMGt0)
		} else if ends(b, n, "iciti") {
			return replace(b, n, 5, "ic", porterMGt0)
		}
	case 'u':
		if ends(b, n, "ful") {
			return replace(b, n, 3, "", porterMGt0)
		}
	case 'v':
		if ends(b, n, "ative") {
			return replace(b, n, 5, "", porterMGt0)
		}
	case 'z':
		if ends(b, n, "alize") {
			return replace(b, n, 5, "al", porterMGt0)
		}
	}
	return n
}

func porterStep4(b []byte, n int) int {
	switch at(b, n-2) {
	case 'a':
		if ends(b, n, "al") {
			return replace(b, n, 2, "", porterMGt1)
		}
	case 'c':
		if ends(b, n, "ance") {
			return replace(b, n, 4, "", porterMGt1)
		} else if ends(b, n, "ence") {
			return replace(b, n, 4, "", porterMGt1)
		}
	case 'e':
		if ends(b, n, "er") {
			return replace(b, n, 2, "", porterMGt1)
		}
	case 'i':
		if ends(b, n, "ic") {
			return replace(b, n, 2, "", porterMGt1)
		}
	case 'l':
		if ends(b, n, "able") {
			return replace(b, n, 4, "", porterMGt1)
		} else if ends(b, n, "ible") {
			return replace(b, n, 4, "", porterMGt1)
		}
	case 'n':
		if ends(b, n, "ant") {
			return replace(b, n, 3, "", porterMGt1)
		} else if ends(b, n, "ement") {
			return replace(b, n, 5, "", porterMGt1)
		} else if ends(b, n, "ment") {
			return replace(b, n, 4, "", porterMGt1)
		} else if ends(b, n, "ent") {
			return replace(b, n, 3, "", porterMGt1)
		}
	case 'o':
		if ends(b, n, "ion") {
			return replace(b, n, 3, "", porterMGt1SorT)
		} else if ends(b, n, "ou") {
			return replace(b, n, 2, "", porterMGt1)
		}
	case 's':
		if ends(b, n, "ism") {
			return replace(b, n, 3, "", porterMGt1)
		}
	case 't':
		if ends(b, n, "ate") {
			return replace(b, n, 3, "", porterMGt1)
		} else if ends(b, n, "iti") {
			return replace(b, n, 3, "", porterMGt1)
		}
	case 'u':
		if ends(b, n, "ous") {
			return replace(b, n, 3, "", porterMGt1)
		}
	case 'v':
		if ends(b, n, "ive") {
			return replace(b, n, 3, "", porterMGt1)
		}
	case 'z':
		if ends(b, n, "ize") {
			return replace(b, n, 3, "", porterMGt1)
		}
	}
	return n
}
