package medline

import (
	"io"
	"regexp"
	"strings"

	"quarry/internal/biblio"
)

// Reader streams records from a MEDLINE file; it holds one record at a
// time, within its Limits.
type Reader struct {
	lines *biblio.Lines
	lim   biblio.Limits
}

// NewReader returns a Reader over r with the default limits. A line that
// is not valid UTF-8 is decoded as Latin-1 in full (PubMed writes UTF-8;
// hand-edited and old files do not).
func NewReader(r io.Reader) *Reader {
	rd := &Reader{lines: biblio.NewLines(r)}
	return rd.WithLimits(biblio.Limits{})
}

// WithLimits sets the longest line and record kept (zero fields: the
// defaults); call it before the first Next. A record with a longer line,
// or longer in all, comes back as a Problem and the rest of its block is
// read without being held.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	r.lines.SetMax(r.lim.MaxLine)
	return r
}

type field struct {
	tag   string
	parts []string
}

// value joins a field's lines with single spaces: MEDLINE wraps long
// values, so line breaks carry no meaning.
func (f field) value() string { return strings.Join(strings.Fields(strings.Join(f.parts, " ")), " ") }

// Next returns the next record, or io.EOF after the last one. A block of
// lines that does not start with a tag comes back as a Problem, and so
// does one with a line over the line limit or over the record limit in
// all.
func (r *Reader) Next() (biblio.Record, error) {
	var (
		fields  []field
		start   int
		inBlock bool
		broken  bool
		size    int
		problem string // set: skipping the rest of an over-long record
	)
	done := func() biblio.Record {
		if problem != "" {
			return biblio.Record{Line: start, Problem: problem}
		}
		return build(fields, start, broken)
	}
	for {
		if !inBlock {
			r.lines.SkipBlank()
		}
		line, ok, err := r.lines.Next()
		if err != nil {
			return biblio.Record{}, err
		}
		if !ok {
			if !inBlock {
				return biblio.Record{}, io.EOF
			}
			return done(), nil
		}
		if strings.TrimSpace(line) == "" {
			if inBlock {
				return done(), nil
			}
			continue
		}
		tag, val, isTag := "", "", false
		if line[0] != ' ' && line[0] != '\t' {
			tag, val, isTag = tagLine(line)
		}
		if !inBlock {
			inBlock, start, broken, size = true, r.lines.Number(), !isTag, len(line)+1
			if r.lines.Long() {
				problem = biblio.LineTooLong(r.lim.MaxLine)
			} else if isTag {
				fields = append(fields, field{tag: tag, parts: []string{val}})
			}
			continue
		}
		if isTag && tag == "PMID" && hasTag(fields, "PMID") {
			// A new record without a blank line before it. A PMID after
			// other tags of a record without one is that record's (PMC
			// exports write "PMC - " first).
			r.lines.Unread(line)
			return done(), nil
		}
		if problem != "" {
			continue
		}
		if r.lines.Long() {
			problem, fields = biblio.LineTooLong(r.lim.MaxLine), nil
			continue
		}
		if size += len(line) + 1; size > r.lim.MaxRecord {
			problem, fields = biblio.RecordTooLong(r.lim.MaxRecord), nil
			continue
		}
		switch {
		case broken:
		case isTag:
			fields = append(fields, field{tag: tag, parts: []string{val}})
		default:
			last := &fields[len(fields)-1]
			last.parts = append(last.parts, line)
		}
	}
}

var (
	articleNumber = regexp.MustCompile(`^[eE]?\d{1,7}$`)
	doiURL        = regexp.MustCompile(`(?i)^https?://(?:dx\.)?doi\.org/(10\..+)$`)
	yearRE        = regexp.MustCompile(`(?:^|\D)(\d{4})(?:\D|$)`)
	initials      = regexp.MustCompile(`^[A-Z]{1,4}$`)
)

func hasTag(fields []field, tag string) bool {
	for _, f := range fields {
		if f.tag == tag {
			return true
		}
	}
	return false
}

// build maps one record's fields onto a biblio.Record.
func build(fields []field, start int, broken bool) biblio.Record {
	rec := biblio.Record{Line: start}
	if broken {
		rec.Problem = "record does not start with a MEDLINE tag"
		return rec
	}
	first := map[string]string{}
	var fau, au []biblio.Name
	var pts, notes []string
	var editors, shortEditors []biblio.Name
	extra := map[string]string{}
	hasFAU, hasFED := false, false
	pii := ""
	p := &rec.Paper
	for _, f := range fields {
		v := f.value()
		switch f.tag {
		case "FAU":
			// The full name gives the split ("Wong Kee Song, Louis M.");
			// AU is its short form ("Wong Kee Song LM").
			fau, hasFAU = append(fau, biblio.ParseName(v)), true
		case "AU":
			au = append(au, biblio.ParseName(auName(v)))
		case "CN":
			n := biblio.Name{Literal: v}
			fau, au = append(fau, n), append(au, n)
		case "FED":
			editors, hasFED = append(editors, biblio.ParseName(v)), true
		case "ED":
			shortEditors = append(shortEditors, biblio.ParseName(auName(v)))
		case "PT":
			pts = append(pts, v)
		case "OT":
			rec.Keywords = append(rec.Keywords, v)
		case "MH":
			rec.Keywords = append(rec.Keywords, heading(v))
		case "GN":
			if m, n := biblio.SplitNote(v); m != "" && rec.Mark == "" {
				rec.Mark, v = m, n
			}
			if v != "" {
				notes = append(notes, v)
			}
		case "LID", "AID":
			id, kind := articleID(v)
			if m := doiURL.FindStringSubmatch(id); m != nil && kind == "" {
				id, kind = m[1], "doi" // ERIC writes the DOI as a doi.org URL
			}
			switch {
			case kind == "pii" && f.tag == "LID" && pii == "" && articleNumber.MatchString(id):
				pii = id
			case kind == "doi" && p.DOI == "":
				p.DOI = id
			case kind == "arxiv" && p.ArxivID == "":
				p.ArxivID = id
			case kind == "url" && p.URL == "":
				p.URL = id
			}
		case "IS":
			// "1759-8486 (Electronic)": the first ISSN, without its medium.
			if id, _, _ := strings.Cut(v, " ("); id != "" && extra[biblio.ExtraISSN] == "" {
				extra[biblio.ExtraISSN] = strings.TrimSpace(id)
			}
		case "ISBN":
			if extra[biblio.ExtraISBN] == "" {
				extra[biblio.ExtraISBN] = v
			}
		}
		if _, seen := first[f.tag]; !seen && v != "" {
			first[f.tag] = v
		}
	}
	if hasFAU {
		rec.Names = fau
	} else {
		rec.Names = au
	}
	if !hasFED {
		editors = shortEditors
	}
	if len(editors) > 0 {
		extra[biblio.ExtraEditor] = biblio.JoinEditors(editors)
	}
	for tag, key := range map[string]string{"PB": biblio.ExtraPublisher, "PL": biblio.ExtraAddress, "LA": biblio.ExtraLanguage, "EN": biblio.ExtraEdition} {
		if v := first[tag]; v != "" {
			extra[key] = v
		}
	}
	p.PMID = first["PMID"]
	p.Title = first["TI"]
	p.Venue = first["JT"]
	if p.Venue == "" {
		p.Venue = first["TA"]
	}
	if p.Title == "" {
		p.Title = first["BTI"] // a whole book
	} else if p.Venue == "" {
		p.Venue = first["BTI"] // a chapter: the book is its venue
	}
	p.Abstract = first["AB"]
	p.Volume, p.Issue, p.Pages = first["VI"], first["IP"], first["PG"]
	if p.Pages == "" {
		// An electronic article's number is its location id (LID [pii]),
		// as Zotero reads it; only a number ("1042", "e0815"), since a
		// publisher's item id (S0033-3506(15)00037-2) is no page.
		p.Pages = pii
	}
	if m := yearRE.FindStringSubmatch(first["DP"]); m != nil {
		for _, c := range m[1] {
			p.Year = p.Year*10 + int(c-'0')
		}
	} else if w := biblio.NotAYear(first["DP"]); w != "" {
		rec.Warnings = append(rec.Warnings, w+"; imported without a year")
	}
	rec.Type = typeOf(pts)
	rec.Note = strings.Join(notes, " ")
	biblio.SetExtra(&rec, extra)
	biblio.Finish(&rec)
	return rec
}

// articleID splits "10.1038/x [doi]" into the identifier and its type.
func articleID(v string) (id, kind string) {
	i := strings.LastIndexByte(v, '[')
	if i < 0 || !strings.HasSuffix(v, "]") {
		return v, ""
	}
	return strings.TrimSpace(v[:i]), strings.ToLower(v[i+1 : len(v)-1])
}

// auName turns PubMed's short form "Smith JA" into "Smith, JA", so the
// initials are not taken for a surname.
func auName(v string) string {
	i := strings.LastIndexByte(v, ' ')
	if i < 0 || strings.Contains(v, ",") || !initials.MatchString(v[i+1:]) {
		return v
	}
	return v[:i] + ", " + v[i+1:]
}

// heading takes a MeSH heading without its subheadings and the star that
// marks a major topic: "Neoplasms/*drug therapy" → "Neoplasms".
func heading(v string) string {
	if i := strings.IndexByte(v, '/'); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(strings.ReplaceAll(v, "*", ""))
}
