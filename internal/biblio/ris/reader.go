package ris

import (
	"io"
	"regexp"
	"strings"

	"quarry/internal/biblio"
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
	p := &rec.Paper
	for _, f := range fields {
		v := f.value()
		switch f.tag {
		case "AU", "A1":
			p.Authors = append(p.Authors, invertInitials(v))
		case "KW":
			rec.Keywords = append(rec.Keywords, v)
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
			urls = append(urls, strings.TrimSpace(v))
		}
		if _, seen := first[f.tag]; !seen && strings.TrimSpace(v) != "" {
			first[f.tag] = v
		}
	}
	ty := strings.ToUpper(strings.TrimSpace(first["TY"]))
	p.Title = pick(first, "TI", "T1", "CT")
	venues := venueTags
	if p.Title == "" {
		p.Title = first["BT"]
		venues = []string{"T2", "JF", "JO", "SO", "T3", "JA", "J2"}
	}
	p.Venue = pick(first, venues...)
	yearText := ""
	for _, t := range []string{"PY", "Y1", "DA"} {
		if m := yearRE.FindStringSubmatch(first[t]); m != nil {
			p.Year = atoi(m[1])
			break
		}
		if yearText == "" {
			yearText = first[t]
		}
	}
	if p.Year == 0 {
		rec.Problem = biblio.NotAYear(yearText)
	}
	p.Volume, p.Issue = first["VL"], first["IS"]
	sp, ep := strings.TrimSpace(first["SP"]), strings.TrimSpace(first["EP"])
	switch {
	case sp != "" && ep != "":
		p.Pages = sp + "-" + ep
	case sp != "":
		p.Pages = sp
	default:
		p.Pages = ep
	}
	p.Abstract = pick(first, "AB", "N2")
	p.DOI = first["DO"]
	if len(urls) > 0 {
		p.URL = urls[0]
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
	rec.Note = strings.Join(notes, "\n")
	biblio.Finish(&rec)
	return rec
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
