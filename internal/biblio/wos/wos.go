// Package wos reads and writes the Web of Science plain-text export
// ("FN Clarivate Analytics Web of Science", "VR 1.0", then records from
// "PT J" to "ER", and "EF" at the end of the file): two-letter tags, one
// space, the value; continuation lines are indented by three spaces.
//
// There is no Go library for it; it is close to RIS and MEDLINE and as
// small, so this package is our own; it is fuzzed (FuzzReader).
//
// What it carries, and how:
//   - Authors: AF (full names, "Wong Kee Song, Louis M.") gives the split,
//     AU ("Wong Kee Song, LM") when there is no AF; group authors (CA, GP)
//     are kept whole. One name a line.
//   - Title TI, venue SO (the proceedings for a conference paper, the book
//     for a chapter), year PY (PD when PY is missing), VL, IS, BP-EP (AR,
//     the article number, when there are no pages), DI, PM, AB.
//   - Keywords: DE (the authors') and ID (Keywords Plus), "; " apart.
//   - Type: PT (J journal, B book, S series, C conference, P patent) with
//     DT (Article, Review, Proceedings Paper, Book Chapter, ...).
//   - PU, PI, SN, BN, BE, LA go to the shared Extra keys (publisher,
//     address, issn, isbn, editor, language); every other tag except the
//     cited references (CR) is kept as wos_XX and written back.
//   - Lines of a multi-line value other than names are joined by a space,
//     as Web of Science wraps them: LINE BREAKS ARE NOT CONTENT.
//   - Mark and note, URL, arXiv ID and edition go in Quarry-only tags
//     (N1, UR, XA, ET),
//     which Web of Science does not have and other readers ignore.
//   - Keywords are written "; " apart in one DE: A KEYWORD WITH A SEMICOLON
//     COMES BACK AS TWO.
package wos

import (
	"strings"

	"quarry/internal/biblio"
)

// listTags hold one item a line (names, addresses, cited references).
var listTags = map[string]bool{"AU": true, "AF": true, "BA": true, "BF": true, "BE": true, "CA": true, "GP": true, "CR": true, "C1": true, "C3": true, "RI": true, "OI": true, "EM": true, "FU": true}

// typeOf maps PT and DT to a publication type.
func typeOf(pt, dt string) string {
	dt = strings.ToLower(dt)
	pt = strings.ToUpper(strings.TrimSpace(pt))
	switch {
	case strings.Contains(dt, "proceedings paper") || pt == "C":
		return biblio.Conference
	case strings.Contains(dt, "chapter"):
		return biblio.Chapter
	case strings.Contains(dt, "dissertation") || strings.Contains(dt, "thesis"):
		return biblio.Thesis
	case strings.Contains(dt, "preprint"):
		return biblio.Preprint
	case strings.Contains(dt, "technical report"):
		return biblio.Report
	case dt == "misc" || pt == "P":
		return biblio.Misc
	case pt == "B":
		return biblio.Book
	}
	return biblio.Article
}

// typeToWoS is what the writer gives PT and DT for each type; typeOf reads
// each back as the same type.
var typeToWoS = map[string][2]string{
	biblio.Article:    {"J", "Article"},
	biblio.Conference: {"C", "Proceedings Paper"},
	biblio.Chapter:    {"B", "Book Chapter"},
	biblio.Book:       {"B", "Book"},
	biblio.Thesis:     {"J", "Dissertation"},
	biblio.Preprint:   {"J", "Preprint"},
	biblio.Report:     {"J", "Technical Report"},
	biblio.Misc:       {"J", "Misc"},
}

// tagLine splits "TI Title": two characters (a capital, then a capital or
// a digit) and a space or the end of the line.
func tagLine(line string) (tag, value string, ok bool) {
	if len(line) < 2 || !isUpper(line[0]) || !(isUpper(line[1]) || line[1] >= '0' && line[1] <= '9') {
		return "", "", false
	}
	if len(line) == 2 {
		return line, "", true
	}
	if line[2] != ' ' {
		return "", "", false
	}
	return line[:2], strings.TrimSpace(line[3:]), true
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
