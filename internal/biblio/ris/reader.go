package ris

import (
	"cmp"
	"io"
	"regexp"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// Reader streams records from a RIS file; it holds one record at a time,
// within its Limits.
type Reader struct {
	lines *biblio.Lines
	lim   biblio.Limits
}

// NewReader returns a Reader over r with the default limits. Invalid
// UTF-8 is read as Latin-1 (line by line: a line that is not valid UTF-8
// is decoded as Latin-1 in full), because old EndNote and database exports
// are often Latin-1.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{lines: biblio.NewLines(r)}
	return rd.WithLimits(biblio.Limits{})
}

// WithLimits sets the longest line and record kept (zero fields: the
// defaults); call it before the first Next. A record with a longer line,
// or longer in all, comes back as a Problem and the rest of it is read
// without being held.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	r.lines.SetMax(r.lim.MaxLine)
	return r
}

// field is one tag with its value lines (the first line and continuations).
type field struct {
	tag   string
	lines []string
}

func (f field) value() string { return strings.Join(f.lines, "\n") }

// Next returns the next record, or io.EOF after the last one. Text
// between records is ignored; tags before any TY come back as one record
// with a Problem, up to the next ER or TY; a record missing its ER ends at
// the next TY (or the end of the file) and is read normally. A line over
// the line limit (even between records) or a record over the record limit
// is a Problem record: what follows is skipped up to the record's end.
func (r *Reader) Next() (biblio.Record, error) {
	var (
		fields  []field
		start   int
		broken  bool
		size    int
		problem string // set: skipping the rest of an over-long record
	)
	for {
		if fields == nil {
			r.lines.SkipBlank() // blank lines between records, or in one being skipped
		}
		line, ok, err := r.lines.Next()
		if err != nil {
			return biblio.Record{}, err
		}
		if !ok {
			if problem != "" {
				return biblio.Record{Line: start, Problem: problem}, nil
			}
			if fields == nil {
				return biblio.Record{}, io.EOF
			}
			return build(fields, start, broken), nil
		}
		tag, val, isTag := isTagLine(line)
		inRecord := fields != nil || problem != ""
		if inRecord && isTag && tag == "TY" {
			// The previous record lacks its ER: close it, keep this line.
			r.lines.Unread(line)
			if problem != "" {
				return biblio.Record{Line: start, Problem: problem}, nil
			}
			return build(fields, start, broken), nil
		}
		if problem == "" && r.lines.Long() {
			if !inRecord {
				start = r.lines.Number()
			}
			problem, fields = biblio.LineTooLong(r.lim.MaxLine), nil
			if isTag && tag == "ER" {
				return biblio.Record{Line: start, Problem: problem}, nil
			}
			continue
		}
		if problem != "" {
			if isTag && tag == "ER" {
				return biblio.Record{Line: start, Problem: problem}, nil
			}
			continue
		}
		if fields == nil {
			if !isTag || tag == "ER" {
				continue // text between records, a stray ER
			}
			start, broken, size = r.lines.Number(), tag != "TY", len(line)+1
			fields = append(fields, field{tag: tag, lines: []string{val}})
			continue
		}
		if size += len(line) + 1; size > r.lim.MaxRecord {
			problem, fields = biblio.RecordTooLong(r.lim.MaxRecord), nil
			if isTag && tag == "ER" {
				return biblio.Record{Line: start, Problem: problem}, nil
			}
			continue
		}
		switch {
		case isTag && tag == "ER":
			return build(fields, start, broken), nil
		case isTag:
			fields = append(fields, field{tag: tag, lines: []string{val}})
		default:
			last := &fields[len(fields)-1]
			last.lines = append(last.lines, strings.TrimPrefix(line, " "))
		}
	}
}

var (
	yearRE  = regexp.MustCompile(`(?:^|\D)(\d{4})(?:\D|$)`)
	doiURL  = regexp.MustCompile(`(?i)^https?://(?:dx\.)?doi\.org/(10\..+)$`)
	arxivRE = regexp.MustCompile(`(?i)^https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?$`)
	pmidRE  = regexp.MustCompile(`(?i)^pmid:?\s*(\S.*)$`)
	digits  = regexp.MustCompile(`^\d+$`)
	pubmed  = regexp.MustCompile(`(?i)pubmed|medline|\bnlm\b`)
)

// venueTags lists the tags that can name the venue, best first: full
// journal or container names before abbreviations.
var venueTags = []string{"T2", "JF", "JO", "SO", "BT", "T3", "JA", "J2"}

// build maps the fields of one record onto a biblio.Record.
func build(fields []field, start int, broken bool) biblio.Record {
	rec := biblio.Record{Line: start}
	if broken {
		rec.Problem = "record does not start with a TY tag"
		return rec
	}
	first := map[string]string{}
	var notes, ans, urls []string
	var editors []biblio.Name
	extra := map[string]string{}
	p := &rec.Paper
	ty := ""
	for _, f := range fields {
		if f.tag == "TY" {
			ty = strings.ToUpper(strings.TrimSpace(f.value()))
			break
		}
	}
	editorTag := "ED"
	if t := risToType[ty]; t == biblio.Chapter || t == biblio.Conference {
		// A2 is the book's or the proceedings' editor (RIS spec, Zotero).
		editorTag = "A2"
	}
	for _, f := range fields {
		v := f.value()
		switch f.tag {
		case "AU", "A1":
			if n, ok := risName(v); ok {
				rec.Names = append(rec.Names, n)
			}
		case "KW":
			// One keyword a tag; EndNote also puts several in one, a line
			// apart. Semicolons are kept: they are part of keywords such as
			// "neural networks; convolutional" that our writer wrote.
			rec.Keywords = append(rec.Keywords, strings.Split(v, "\n")...)
		case "N1":
			if m, n := biblio.SplitNote(v); m != "" && rec.Mark == "" {
				rec.Mark, v = m, n
			}
			if strings.TrimSpace(v) != "" {
				notes = append(notes, v)
			}
		case "AN":
			ans = append(ans, strings.TrimSpace(v))
		case "UR":
			// One URL a tag, or several a semicolon apart (rispy's test data).
			for _, u := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == '\n' }) {
				if u = strings.TrimSpace(u); u != "" {
					urls = append(urls, u)
				}
			}
		case editorTag, "ED":
			if n, ok := risName(v); ok {
				editors = append(editors, n)
			}
		case "PB":
			setExtra(extra, biblio.ExtraPublisher, v)
		case "CY":
			setExtra(extra, biblio.ExtraAddress, v)
		case "ET":
			setExtra(extra, biblio.ExtraEdition, v)
		case "LA":
			setExtra(extra, biblio.ExtraLanguage, v)
		case "SN":
			setExtra(extra, snKind(v, risToType[ty]), v)
		case "TY", "TI", "T1", "CT", "BT", "T2", "JF", "JO", "SO", "T3", "JA", "J2", "PY", "Y1", "DA",
			"VL", "IS", "SP", "EP", "AB", "N2", "DO", "DB", "DP":
		default:
			// Kept under its tag, written back by the writer.
			if strings.TrimSpace(v) != "" {
				addExtra(extra, "ris_"+f.tag, v)
			}
		}
		if _, seen := first[f.tag]; !seen && strings.TrimSpace(v) != "" {
			first[f.tag] = v
		}
	}
	for _, tag := range []string{"DB", "DP", "JA", "J2"} {
		if v, ok := first[tag]; ok {
			extra["ris_"+tag] = v
		}
	}
	if v, ok := first["T3"]; ok {
		extra[biblio.ExtraSeries] = v // the series title (RIS spec, Zotero)
	}
	if len(editors) > 0 {
		extra[biblio.ExtraEditor] = biblio.JoinEditors(editors)
	}
	p.Title = pick(first, "TI", "T1", "CT")
	venues := venueTags
	if p.Title == "" {
		p.Title = first["BT"]
		venues = []string{"T2", "JF", "JO", "SO", "T3", "JA", "J2"}
	}
	if t := risToType[ty]; t == biblio.Conference {
		// EndNote's conference paper: C3 is the proceedings, T2 the
		// conference's name.
		venues = append([]string{"C3"}, venues...)
	}
	p.Venue = pick(first, venues...)
	// The full date (DA, or Y1 in the old spec) wins over the year alone,
	// as in Zotero: Y1 is deprecated and DA may be more precise.
	yearText := ""
	for _, t := range []string{"DA", "Y1", "PY"} {
		if biblio.BeforeCommonEra(first[t]) {
			yearText = cmp.Or(yearText, first[t])
			continue
		}
		if m := yearRE.FindStringSubmatch(first[t]); m != nil {
			p.Year = atoi(m[1])
			break
		}
		if yearText == "" {
			yearText = first[t]
		}
	}
	if p.Year == 0 {
		// EndNote's placeholder "Year", "unknown", "4000 BC", "-0043"
		// (Quarry's years cannot hold those before the common era): the
		// record imports without a year, the value is kept for export.
		if w := biblio.NotAYear(yearText); w != "" {
			rec.Warnings = append(rec.Warnings, w+"; imported without a year")
			extra["ris_PY"] = strings.TrimSpace(yearText)
		}
	}
	p.Volume, p.Issue = first["VL"], first["IS"]
	if t := risToType[ty]; p.Issue == "" && (t == biblio.Article || t == biblio.Conference || t == "") {
		p.Issue = first["M1"] // EndNote's "Number" of articles and papers
	}
	sp, ep := strings.TrimSpace(first["SP"]), strings.TrimSpace(first["EP"])
	switch {
	case sp != "" && ep != "":
		p.Pages = sp + "-" + ep
	case sp != "":
		p.Pages = sp
	default:
		p.Pages = ep
	}
	refManNotes(risToType[ty], notes, p, extra)
	p.Abstract = pick(first, "AB", "N2")
	p.DOI = first["DO"]
	if len(urls) > 0 {
		p.URL = urls[0]
		if len(urls) > 1 {
			extra["ris_UR"] = strings.Join(urls[1:], "\n")
		}
	}
	isPubMed := pubmed.MatchString(first["DB"]) || pubmed.MatchString(first["DP"])
	explicitArxiv := false
	for _, a := range ans {
		switch {
		case len(a) > 6 && strings.EqualFold(a[:6], "arxiv:"):
			if !explicitArxiv {
				p.ArxivID, explicitArxiv = a[6:], true
			}
		case pmidRE.MatchString(a):
			if p.PMID == "" {
				p.PMID = pmidRE.FindStringSubmatch(a)[1]
			}
		case isPubMed && digits.MatchString(a):
			if p.PMID == "" {
				p.PMID = a
			}
		default:
			addExtra(extra, "ris_AN", a)
		}
	}
	for _, u := range urls {
		if m := doiURL.FindStringSubmatch(u); m != nil && strings.TrimSpace(p.DOI) == "" {
			p.DOI = m[1]
		}
		if m := arxivRE.FindStringSubmatch(u); m != nil && strings.TrimSpace(p.ArxivID) == "" {
			p.ArxivID = m[1]
		}
	}
	rec.Type = biblio.Misc
	if t, ok := risToType[ty]; ok {
		rec.Type = t
	} else if (ty == "UNPB" || ty == "GEN") && !explicitArxiv && strings.TrimSpace(p.ArxivID) != "" {
		// Zotero before its preprint type: a generic item at an arXiv URL.
		// Our own writer states the ID in AN, and writes preprints as
		// PREPRINT, so an explicit ID on GEN means a deliberate Misc.
		rec.Type = biblio.Preprint
	}
	if ty != "" && typeToRIS[rec.Type] != ty {
		extra["ris_TY"] = ty // the exact type, for the writer
	}
	rec.Note = strings.Join(notes, "\n")
	biblio.SetExtra(&rec, extra)
	biblio.Finish(&rec)
	return rec
}

// refManKV is one "Key: Value" line Reference Manager writes in N1 for a
// field RIS had no tag for.
var refManKV = regexp.MustCompile(`^(Volume ID|Issue ID|Proceedings Title|Page\(s\)):\s*(\S.*)$`)

// refManNotes reads the fields Reference Manager puts in N1 lines
// ("N1  - Volume ID: 12"), as Zotero does: the volume (VL then held the
// edition), the issue, a conference paper's proceedings and the pages,
// where no tag gave them. The lines stay in the note.
func refManNotes(typ string, notes []string, p *research.RawPaper, extra map[string]string) {
	for _, n := range notes {
		for _, line := range strings.Split(n, "\n") {
			m := refManKV.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			v := strings.TrimSpace(m[2])
			switch m[1] {
			case "Volume ID":
				if vl := strings.TrimSpace(p.Volume); vl != "" && vl != v {
					setExtra(extra, biblio.ExtraEdition, vl)
				}
				p.Volume = v
			case "Issue ID":
				if strings.TrimSpace(p.Issue) == "" {
					p.Issue = v
				}
			case "Proceedings Title":
				if typ == biblio.Conference {
					p.Venue = v
				}
			case "Page(s)":
				if strings.TrimSpace(p.Pages) == "" {
					p.Pages = v
				}
			}
		}
	}
}

// risName reads an AU value the way Zotero does: "Last, First" (or
// "Last, First, Suffix", the RIS spec) is a person; a name without a comma
// is an organisation kept whole, except the "Smith J." of Scopus and Web of
// Science, which is a person with initials.
func risName(v string) (biblio.Name, bool) {
	v = strings.Join(strings.Fields(v), " ")
	switch {
	case v == "":
		return biblio.Name{}, false
	case strings.Contains(v, ","):
		return biblio.ParseName(v), true
	}
	if inv := invertInitials(v); inv != v {
		return biblio.ParseName(inv), true
	}
	return biblio.Name{Literal: v}, true
}

var (
	issnRE = regexp.MustCompile(`^\d{4}-?\d{3}[\dXx]\b`)
	isbnRE = regexp.MustCompile(`^(?:97[89][- ]?)?(?:\d[- ]?){9}[\dXx]\b`)
)

// snKind tells an ISSN from an ISBN in SN, which RIS uses for both: by
// its form, else by the type (books and chapters have ISBNs).
func snKind(v, typ string) string {
	v = strings.TrimSpace(v)
	switch {
	case issnRE.MatchString(v):
		return biblio.ExtraISSN
	case isbnRE.MatchString(v):
		return biblio.ExtraISBN
	case typ == biblio.Book || typ == biblio.Chapter || typ == biblio.Conference:
		return biblio.ExtraISBN
	}
	return biblio.ExtraISSN
}

// setExtra keeps the first value of a field.
func setExtra(m map[string]string, key, v string) {
	if v = strings.TrimSpace(v); v != "" {
		if _, ok := m[key]; !ok {
			m[key] = v
		}
	}
}

// addExtra keeps every value of a repeated tag, a line apart.
func addExtra(m map[string]string, key, v string) {
	if old, ok := m[key]; ok {
		m[key] = old + "\n" + v
		return
	}
	m[key] = v
}

// pick returns the first non-empty value among tags.
func pick(first map[string]string, tags ...string) string {
	for _, t := range tags {
		if v := first[t]; v != "" {
			return v
		}
	}
	return ""
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// invertInitials turns "Smith J." or "Smith JA" (Scopus, Web of Science
// style, no comma) into "Smith, J.", so the surname is not taken for a
// first name; names with a comma or without trailing initials are kept.
func invertInitials(name string) string {
	words := strings.Fields(name)
	if strings.Contains(name, ",") || len(words) < 2 {
		return name
	}
	last := words[len(words)-1]
	if !looksLikeInitials(last) {
		return name
	}
	return strings.Join(words[:len(words)-1], " ") + ", " + last
}

// looksLikeInitials accepts "J.", "J.-P.", "A.B." and "JA" (up to three
// capitals without dots), and nothing with a lower-case letter.
func looksLikeInitials(w string) bool {
	letters, dots := 0, 0
	for _, c := range w {
		switch {
		case c >= 'A' && c <= 'Z':
			letters++
		case c == '.':
			dots++
		case c == '-':
		default:
			return false
		}
	}
	return letters > 0 && (dots > 0 || letters <= 3)
}
