package textindex

// This file ports the parts of SQLite's ext/fts5/fts5_unicode2.c that the
// "unicode61 remove_diacritics 2" tokenizer uses, over the tables in
// unicode_tables.go. SQLite's tables follow an older Unicode version than
// Go's unicode package, and FTS5 has its own rules (unlisted code points
// are token characters, for one), so Go's tables would split and fold some
// text differently from the FTS5 index we must rank like.

//go:generate go run unicode_gen.go

// foldEntry is one case-folding range of fts5_unicode2.c's aEntry.
type foldEntry struct {
	code   uint16
	flags  uint8
	nRange uint8
}

// tokenCategories has bit k set for each category k (fts5_unicode2.c's
// numbering) that unicode61's default "L* N* Co" makes a token character.
// sqlite3Fts5UnicodeCatParse always sets category 0 too: the code points
// no table entry covers (unassigned ones, and all from U+100000 on).
const tokenCategories uint32 = 1<<0 |
	1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<30 | // Ll Lm Lo Lt Lu LC
	1<<13 | 1<<14 | 1<<15 | // Nd Nl No
	1<<31 // Co

// unicodeCategory is sqlite3Fts5UnicodeCategory: code point c's category
// number, 0 when no entry covers it.
func unicodeCategory(c uint32) uint32 {
	if c >= 1<<20 {
		return 0
	}
	lo, hi := int(unicodeBlock[c>>16]), int(unicodeBlock[c>>16+1])
	key := uint16(c)
	res := -1
	for hi > lo {
		mid := (lo + hi) / 2
		if key >= unicodeMap[mid] {
			res = mid
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if res < 0 {
		return 0
	}
	d := unicodeData[res]
	if uint32(key) >= uint32(unicodeMap[res])+uint32(d>>5) {
		return 0
	}
	cat := uint32(d & 0x1F)
	if cat != 30 {
		return cat
	}
	// Category 30 marks runs alternating upper and lower case letters.
	if (key-unicodeMap[res])&1 != 0 {
		return 5
	}
	return 9
}

// isTokenRune reports whether code point c is part of tokens rather than a
// separator (fts5UnicodeIsAlnum without tokenchars/separators exceptions).
func isTokenRune(c uint32) bool {
	return tokenCategories&(1<<unicodeCategory(c)) != 0
}

// isDiacritic is sqlite3Fts5UnicodeIsdiacritic: the combining marks that
// continue a token (and fold to nothing) though they cannot start one.
func isDiacritic(c uint32) bool {
	const mask0, mask1 = 0x08029FDF, 0x000361F8
	if c < 768 || c > 817 {
		return false
	}
	if c < 768+32 {
		return mask0&(1<<(c-768)) != 0
	}
	return mask1&(1<<(c-768-32)) != 0
}

// unicodeFold is sqlite3Fts5UnicodeFold with eRemoveDiacritic = 2: c
// lower-cased and, in the BMP, stripped of its diacritics; 0 means the
// character vanishes from the token. c is the uint32 READ_UTF8 yields; the
// C code handles it as an int, so values from 2^31 on (only invalid UTF-8
// makes them) are negative there and come back unchanged, as here.
func unicodeFold(c uint32) uint32 {
	if c < 128 {
		if c >= 'A' && c <= 'Z' {
			return c + ('a' - 'A')
		}
		return c
	}
	if c >= 65536 {
		if c >= 66560 && c < 66600 { // Deseret capitals
			return c + 40
		}
		return c
	}
	ret := c
	lo, hi, res := 0, len(foldEntries)-1, -1
	for hi >= lo {
		mid := (lo + hi) / 2
		if int(c)-int(foldEntries[mid].code) >= 0 {
			res = mid
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	e := foldEntries[res] // foldEntries[0].code is 'A', so res >= 0 here
	if c < uint32(e.code)+uint32(e.nRange) && 1&uint32(e.flags)&(uint32(e.code)^c) == 0 {
		ret = (c + uint32(foldOffsets[e.flags>>1])) & 0xFFFF
	}
	return removeDiacritic(ret)
}

// removeDiacritic is fts5_remove_diacritic with bComplex set
// (remove_diacritics=2): the ASCII letter c is based on, 0 for a combining
// mark, c itself otherwise.
func removeDiacritic(c uint32) uint32 {
	key := c<<3 | 7
	lo, hi, res := 0, len(diacriticKeys)-1, 0
	for hi >= lo {
		mid := (lo + hi) / 2
		if key >= uint32(diacriticKeys[mid]) {
			res = mid
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	d := uint32(diacriticKeys[res])
	if c > d>>3+d&7 {
		return c
	}
	return uint32(diacriticChars[res] & 0x7F)
}
