// Package ris reads and writes RIS, the tagged format EndNote, Zotero,
// Mendeley, Scopus and most databases export ("TY  - JOUR" ... "ER  - ").
//
// There is no well-kept Go library for RIS (the few on pkg.go.dev are
// unmaintained, load whole files and drop continuation lines), and the
// format is small, so this package is our own; it is fuzzed (FuzzReader).
//
// Conventions, so that what Quarry writes reads back unchanged:
//   - The writer ends lines with CRLF, as EndNote does: EndNote and older
//     Windows tools expect it, and every reader (ours included) also takes LF.
//   - RIS has no escaping. A value with line breaks (abstract paragraphs,
//     notes) is written as the tag line plus continuation lines, the way
//     EndNote writes multi-line N1/AB. A continuation line that would look
//     like a tag line ("XX  - ...") or that starts with a blank is written
//     with one extra leading space, and the reader strips one leading space
//     from every continuation line; so the reader gets the exact text back.
//   - The researcher's mark and note go in N1 (biblio.NoteField).
//   - Identifiers without a RIS tag go in AN (accession number): "arXiv:ID"
//     for arXiv, and the PMID with "DB  - PubMed", as EndNote's PubMed
//     import writes it.
//
// Known, documented losses: Type "" (unknown) is written as GEN and reads
// back as Misc, because TY is mandatory; a URL at doi.org or arxiv.org also
// fills DOI / ArxivID when those are empty; GEN or UNPB with an arXiv ID
// reads as Preprint (how older Zotero exported arXiv papers).
package ris

import (
	"quarry/internal/biblio"
)

// typeToRIS is the TY code written for each publication type.
var typeToRIS = map[string]string{
	biblio.Article:    "JOUR",
	biblio.Conference: "CONF",
	biblio.Preprint:   "PREPRINT",
	biblio.Book:       "BOOK",
	biblio.Chapter:    "CHAP",
	biblio.Thesis:     "THES",
	biblio.Report:     "RPRT",
	biblio.Misc:       "GEN",
}

// risToType maps the TY codes we recognise; any other code is Misc.
var risToType = map[string]string{
	"JOUR":     biblio.Article,
	"JFULL":    biblio.Article,
	"MGZN":     biblio.Article,
	"NEWS":     biblio.Article,
	"EJOUR":    biblio.Article,
	"CONF":     biblio.Conference,
	"CPAPER":   biblio.Conference,
	"PREPRINT": biblio.Preprint,
	"BOOK":     biblio.Book,
	"EBOOK":    biblio.Book,
	"EDBOOK":   biblio.Book,
	"CHAP":     biblio.Chapter,
	"ECHAP":    biblio.Chapter,
	"THES":     biblio.Thesis,
	"RPRT":     biblio.Report,
}

// isTagLine reports whether line is a RIS tag line and splits it: two
// characters (an upper-case letter, then a letter or digit), one or more
// spaces, a dash, then end of line or a space and the value. Reader and
// writer share it, so the writer knows exactly which value lines to guard.
func isTagLine(line string) (tag, value string, ok bool) {
	if len(line) < 4 || !isUpper(line[0]) || !(isUpper(line[1]) || isDigit(line[1])) || line[2] != ' ' {
		return "", "", false
	}
	i := 3
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '-' {
		return "", "", false
	}
	i++
	switch {
	case i == len(line):
		return line[:2], "", true
	case line[i] == ' ':
		return line[:2], line[i+1:], true
	}
	return "", "", false
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
