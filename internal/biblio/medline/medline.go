// Package medline reads and writes PubMed's MEDLINE format: the .nbib file
// of "Send to: Citation manager" and the "Format: PubMed" text. Records are
// separated by blank lines and start with "PMID- "; a tag is 1-4 capitals
// padded to four columns, then "- "; continuation lines start with six
// spaces.
//
// There is no well-kept Go library for MEDLINE, so this package is our
// own; it is fuzzed (FuzzReader).
//
// What MEDLINE can carry, and how (documented losses in capitals):
//   - Authors go in FAU ("Last, First") with an AU ("Last FM") beside it,
//     as PubMed writes them; names that look like groups go in CN.
//   - Keywords go in OT. The reader also takes MeSH headings (MH) as
//     keywords, without subheadings and the major-topic star.
//   - Mark and note go in GN (general note) via biblio.NoteField.
//   - The DOI goes in LID and AID with the [doi] type. ArxivID and URL have
//     no MEDLINE tag; we write them as AID with the types [arxiv] and [url],
//     which other tools ignore and our reader reads back.
//   - MEDLINE wraps long values over continuation lines, so LINE BREAKS ARE
//     NOT CONTENT: every value is read with its whitespace collapsed to
//     single spaces, and a multi-paragraph abstract or note comes back as
//     one paragraph.
//   - A record with no publication type is written without PT and reads
//     back with Type ""; Misc is written as PT "Miscellaneous", which is no
//     PubMed type and so reads back as Misc.
package medline

import (
	"strings"

	"quarry/internal/biblio"
)

// typeToPT is the publication type written for each biblio type.
var typeToPT = map[string]string{
	biblio.Article:    "Journal Article",
	biblio.Conference: "Congress",
	biblio.Preprint:   "Preprint",
	biblio.Book:       "Book",
	biblio.Chapter:    "Book Chapter",
	biblio.Thesis:     "Academic Dissertation",
	biblio.Report:     "Technical Report",
	biblio.Misc:       "Miscellaneous",
}

// ptPriority lists the publication types that decide a record's type,
// first match wins: a preprint that is also a "Journal Article" is a
// preprint; a congress paper is a conference paper.
var ptPriority = []struct{ pt, typ string }{
	{"preprint", biblio.Preprint},
	{"congress", biblio.Conference},
	{"book chapter", biblio.Chapter},
	{"book", biblio.Book},
	{"academic dissertation", biblio.Thesis},
	{"technical report", biblio.Report},
}

// articleHints mark the many PubMed types of journal content ("Review",
// "Randomized Controlled Trial", "Case Reports", ...).
var articleHints = []string{"article", "review", "trial", "study", "letter", "editorial", "comment", "case reports", "meta-analysis", "guideline", "news"}

// typeOf maps the PT values of a record to a biblio type.
func typeOf(pts []string) string {
	if len(pts) == 0 {
		return ""
	}
	for _, p := range ptPriority {
		for _, pt := range pts {
			if strings.EqualFold(pt, p.pt) {
				return p.typ
			}
		}
	}
	for _, pt := range pts {
		l := strings.ToLower(pt)
		for _, h := range articleHints {
			if strings.Contains(l, h) {
				return biblio.Article
			}
		}
	}
	return biblio.Misc
}

// tagLine splits a MEDLINE tag line: 1-4 capitals, spaces, a dash, then
// end of line or a space and the value.
func tagLine(line string) (tag, value string, ok bool) {
	i := 0
	for i < len(line) && i < 4 && line[i] >= 'A' && line[i] <= 'Z' {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	tag = line[:i]
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '-' {
		return "", "", false
	}
	i++
	switch {
	case i == len(line):
		return tag, "", true
	case line[i] == ' ':
		return tag, line[i+1:], true
	}
	return "", "", false
}
