package biblio

import (
	"bytes"
	"regexp"
	"strings"
)

var (
	bibtexEntryRE = regexp.MustCompile(`(?m)^\s*@[A-Za-z]+\s*[{(]`)
	// RIS as written ("TY  - "), and with one space ("TY - ", some
	// exporters and hand-written files).
	risTagRE = regexp.MustCompile(`(?m)^TY {1,2}-( |\r?$)`)
	// Web of Science plain text starts with its file header ("FN Clarivate
	// Analytics Web of Science", "VR 1.0") or, cut, with a record ("PT J").
	wosRE = regexp.MustCompile(`^(FN |VR \d|PT [A-Z]\b)`)
	// MEDLINE tags RIS does not have (RIS uses two-letter tags only).
	medlineTagRE = regexp.MustCompile(`(?m)^(PMID|FAU |OWN |STAT)- `)
	// Web of Science tab-delimited exports name columns by field tag.
	wosHeaderRE = regexp.MustCompile(`^(PT|AU|AF|TI)\t`)
	// A CSV header names at least one bibliographic column.
	csvHeaderRE = regexp.MustCompile(`\b(title|authors?|doi|year|abstract|journal|pmid)\b`)
)

// Detect names the format of a file from its first bytes (head, a few KiB
// after decompression), or returns "" if it cannot tell. It looks at
// content, not the file name, because exports are often misnamed (.txt for
// RIS and MEDLINE alike).
func Detect(head []byte) string {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) == 0 {
		return ""
	}
	switch {
	case trimmed[0] == '[':
		return CSLJSON
	case trimmed[0] == '{':
		// One object per line is JSON Lines; an object spread over lines
		// is a pretty-printed CSL-JSON item.
		first := trimmed
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		if bytes.HasSuffix(bytes.TrimRight(first, " \t\r"), []byte("}")) {
			return JSONL
		}
		return CSLJSON
	case wosRE.Match(trimmed):
		return WoS
	case risTagRE.Match(head):
		return RIS
	case medlineTagRE.Match(head):
		return MEDLINE
	case bibtexEntryRE.Match(head):
		return BibTeX
	}
	line := trimmed
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	header := strings.ToLower(string(line))
	if strings.ContainsAny(header, ",;\t") && csvHeaderRE.MatchString(header) || wosHeaderRE.Match(line) {
		return CSV
	}
	return ""
}
