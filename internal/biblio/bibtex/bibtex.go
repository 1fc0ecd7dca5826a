// Package bibtex reads and writes BibTeX and BibLaTeX files, the format
// LaTeX users, Zotero (plain and Better BibTeX), JabRef, DBLP and Google
// Scholar exchange references in.
//
// It is our own parser, not github.com/nickng/bibtex or
// github.com/jschaf/bibtex: both read the whole input into memory
// (io.ReadAll) before parsing and return no entries at all once one entry
// is malformed (nickng's goyacc parser also keeps its result in a package
// variable, so two files cannot be parsed at once), neither reports the line
// an entry starts on, and neither module is served by our module proxy.
// An import of a 100k-entry export must stream and must keep going past a
// broken entry, so this package does both:
//
//   - The Reader reads one entry at a time through a bufio.Reader; memory is
//     bounded by the largest entry (an entry over 1 MiB is reported and
//     skipped).
//   - A malformed entry becomes a Record with Problem and the line it starts
//     on. The reader resynchronises at the next line that starts an entry
//     ("@type{" or "@type(" after optional blanks); such a line inside an
//     unclosed entry ends it, which is how an unbalanced brace is caught
//     without swallowing the rest of the file. A line inside a field value
//     that looks like an entry start is therefore never read as part of the
//     value; the Writer escapes '@' there so its own output never does that.
//   - Field values are decoded from LaTeX to Unicode (accents, \ss and
//     friends, escapes, dashes, ~, protective braces, math: sub- and
//     superscripts, Greek letters and common symbols); any other command
//     vanishes and keeps its arguments (\emph{x}, \mkbibemph{x}, a macro of
//     the file's preamble). url, doi, eprint, arxivid and pmid are verbatim
//     fields in which only backslash escapes are undone, and Web of
//     Science's {{double braces}} around a whole value are taken off.
//   - Author names are split the way BibTeX splits them ("von Last, Jr,
//     First"; a braced name is an organisation) into Record.Names.
//   - A crossref is resolved: the entry inherits the fields of the entry it
//     names, which may come later in the file (entries wait in a queue
//     bounded by 4 x the record limit, so records still come in file order).
//   - Fields the record has no place for are kept in Record.Extra (the
//     type field under "genre"), and so is a year field that holds no year,
//     which imports as no year with a warning.
//   - Bytes that are not valid UTF-8 are decoded as Windows-1252 (Latin-1
//     plus the printable 0x80–0x9F range), the usual encoding of older .bib
//     files, never replaced.
//
// The Writer emits UTF-8 BibLaTeX-compatible BibTeX that this Reader reads
// back to the same biblio.Comparable record, authors' split (biblio.NamesOf)
// and Extra, with two exceptions: a record of unknown type ("") is written
// as @misc and reads back as biblio.Misc, and a citation key is made up
// for a record without one (or whose key an earlier entry took).
package bibtex

import (
	"strings"
	"unicode"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// entryKind maps an entry type (lower case) onto a biblio type. Types not
// listed are Misc: BibLaTeX has dozens of rare ones (@patent, @software,
// @dataset) and they all land in a reference manager's catch-all.
var entryKind = map[string]string{
	"article":        biblio.Article,
	"inproceedings":  biblio.Conference,
	"conference":     biblio.Conference,
	"book":           biblio.Book,
	"mvbook":         biblio.Book,
	"booklet":        biblio.Book,
	"proceedings":    biblio.Book,
	"mvproceedings":  biblio.Book,
	"collection":     biblio.Book,
	"mvcollection":   biblio.Book,
	"reference":      biblio.Book,
	"mvreference":    biblio.Book,
	"incollection":   biblio.Chapter,
	"inbook":         biblio.Chapter,
	"bookinbook":     biblio.Chapter,
	"suppbook":       biblio.Chapter,
	"suppcollection": biblio.Chapter,
	"inreference":    biblio.Chapter,
	"phdthesis":      biblio.Thesis,
	"mastersthesis":  biblio.Thesis,
	"thesis":         biblio.Thesis,
	"techreport":     biblio.Report,
	"report":         biblio.Report,
	"preprint":       biblio.Preprint,
}

// preprintCandidates are the entry types Zotero, arXiv and BibLaTeX users
// put preprints in; with an arXiv eprint (or pubstate = preprint) they are
// preprints rather than miscellany.
var preprintCandidates = map[string]bool{
	"misc": true, "online": true, "electronic": true, "www": true, "unpublished": true,
}

// kind decides a record's biblio type from its entry type and fields.
func kind(typ string, arxiv bool, f fields) string {
	k, ok := entryKind[typ]
	if !ok {
		k = biblio.Misc
	}
	preprintish := preprintCandidates[typ] ||
		// BibLaTeX: an @article that is only on arXiv has no journal yet;
		// one with a PubMed ID or a publisher's DOI has been published.
		(typ == "article" && !f.has("journal") && !f.has("journaltitle") && !published(f))
	if preprintish && (arxiv || strings.EqualFold(strings.TrimSpace(f.raw("pubstate")), "preprint")) {
		return biblio.Preprint
	}
	if k == biblio.Book && f.has("booktitle") && !f.has("publisher") && !sameText(f.raw("title"), f.raw("booktitle")) {
		// A "book" with no publisher of its own that names another book
		// it is in is a part of it, mistyped (Better BibTeX reads it so
		// too); a booktitle that repeats the title says nothing, and a
		// book with a publisher is one (the Writer puts a book's venue
		// in booktitle when it is not the publisher).
		return biblio.Chapter
	}
	return k
}

// published says whether an entry carries an identifier only a published
// work has: a PubMed ID, or a DOI other than arXiv's own (10.48550).
func published(f fields) bool {
	if strings.TrimSpace(f.raw("pmid")) != "" {
		return true
	}
	doi := research.NormalizeDOI(f.raw("doi"))
	return doi != "" && !strings.HasPrefix(doi, arxivDOIPrefix)
}

// arxivDOIPrefix is the DOI prefix arXiv registers its preprints under.
const arxivDOIPrefix = "10.48550/"

// sameText compares two raw field values by their letters and digits
// only, so braces, accents' markup and case do not tell them apart.
func sameText(a, b string) bool {
	fold := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	return fold(a) == fold(b)
}
