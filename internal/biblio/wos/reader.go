package wos

import (
	"io"
	"regexp"
	"strings"

	"quarry/internal/biblio"
)

// Reader streams records from a Web of Science plain-text file; it holds
// one record at a time, within its Limits.
type Reader struct {
	lines *biblio.Lines
	lim   biblio.Limits
}

// NewReader returns a Reader over r with the default limits.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{lines: biblio.NewLines(r)}
	return rd.WithLimits(biblio.Limits{})
}

// WithLimits sets the longest line and record kept (zero fields: the
// defaults); call it before the first Next.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	r.lines.SetMax(r.lim.MaxLine)
	return r
}

type field struct {
	tag   string
	lines []string
}

// value joins a wrapped value's lines with spaces.
func (f field) value() string { return strings.Join(strings.Fields(strings.Join(f.lines, " ")), " ") }

// Next returns the next record, or io.EOF after the last one. The file
// header (FN, VR) and end (EF) are not records; a record ends at ER, or
// at the next PT when its ER is missing. A record with a line over the
// line limit, or over the record limit, comes back as a Problem.
func (r *Reader) Next() (biblio.Record, error) {
	var (
		fields  []field
		start   int
		size    int
		problem string
	)
	done := func() biblio.Record {
		if problem != "" {
			return biblio.Record{Line: start, Problem: problem}
		}
		return build(fields, start)
	}
	for {
		if fields == nil && problem == "" {
			r.lines.SkipBlank()
		}
		line, ok, err := r.lines.Next()
		if err != nil {
			return biblio.Record{}, err
		}
		inRecord := fields != nil || problem != ""
		if !ok {
			if !inRecord {
				return biblio.Record{}, io.EOF
			}
			return done(), nil
		}
		tag, val, isTag := tagLine(line)
		if !inRecord {
			switch {
			case !isTag, tag == "FN", tag == "VR", tag == "EF", tag == "ER":
				continue // the file header and end, stray lines
			}
			start, size = r.lines.Number(), len(line)+1
			if r.lines.Long() {
				problem = biblio.LineTooLong(r.lim.MaxLine)
				continue
			}
			fields = append(fields, field{tag: tag, lines: []string{val}})
			continue
		}
		if isTag && (tag == "ER" || tag == "EF") {
			return done(), nil
		}
		if isTag && tag == "PT" {
			r.lines.Unread(line) // the previous record lacks its ER
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
		case isTag:
			fields = append(fields, field{tag: tag, lines: []string{val}})
		case strings.TrimSpace(line) == "":
		default:
			last := &fields[len(fields)-1]
			last.lines = append(last.lines, strings.TrimSpace(line))
		}
	}
}

var yearRE = regexp.MustCompile(`(?:^|\D)(\d{4})(?:\D|$)`)

// build maps one record's fields onto a biblio.Record.
func build(fields []field, start int) biblio.Record {
	rec := biblio.Record{Line: start}
	first := map[string]string{}
	lists := map[string][]string{}
	extra := map[string]string{}
	p := &rec.Paper
	for _, f := range fields {
		if listTags[f.tag] {
			for _, l := range f.lines {
				if l = strings.TrimSpace(l); l != "" {
					lists[f.tag] = append(lists[f.tag], l)
				}
			}
			continue
		}
		v := f.value()
		if _, seen := first[f.tag]; !seen && v != "" {
			first[f.tag] = v
		}
		switch f.tag {
		case "DE", "ID", "BD", "IP", "MC", "MQ", "OR":
			// Author keywords, Keywords Plus, and the indexing terms of
			// the other Web of Science databases (CABI, BIOSIS, Derwent).
			rec.Keywords = append(rec.Keywords, strings.Split(v, ";")...)
		case "N1":
			rec.Mark, rec.Note = biblio.SplitNote(v)
		}
	}
	names := lists["AF"]
	if len(names) == 0 {
		names = lists["AU"]
	}
	if len(names) == 0 {
		names = lists["BF"]
		if len(names) == 0 {
			names = lists["BA"]
		}
	}
	groups := map[string]int{}
	for _, n := range lists["CA"] {
		groups[n]++
	}
	for _, n := range names {
		if groups[n] > 0 { // a group in its place among the people (Quarry's export)
			rec.Names = append(rec.Names, biblio.Name{Literal: n})
			groups[n]--
			continue
		}
		rec.Names = append(rec.Names, wosName(n))
	}
	for _, n := range lists["CA"] {
		if groups[n] > 0 {
			rec.Names = append(rec.Names, biblio.Name{Literal: n})
			groups[n]--
		}
	}
	var editors []biblio.Name
	for _, n := range lists["BE"] {
		editors = append(editors, biblio.ParseName(n))
	}
	if len(editors) > 0 {
		extra[biblio.ExtraEditor] = biblio.JoinEditors(editors)
	}
	rec.Type = typeOf(first["PT"], first["DT"])
	p.Title = first["TI"]
	p.Venue = first["SO"]
	if p.Venue == "" && rec.Type == biblio.Conference {
		p.Venue = first["CT"]
	}
	yearText := first["PY"]
	if m := yearRE.FindStringSubmatch(yearText); m != nil && !biblio.BeforeCommonEra(yearText) {
		p.Year = atoi(m[1])
	} else if m := yearRE.FindStringSubmatch(first["PD"]); m != nil {
		p.Year = atoi(m[1])
	} else if w := biblio.NotAYear(yearText); w != "" {
		rec.Warnings = append(rec.Warnings, w+"; imported without a year")
	}
	p.Volume, p.Issue = first["VL"], first["IS"]
	bp, ep := first["BP"], first["EP"]
	switch {
	case bp != "" && ep != "":
		p.Pages = bp + "-" + ep
	case bp != "":
		p.Pages = bp
	case ep != "":
		p.Pages = ep
	case first["PS"] != "":
		p.Pages = first["PS"] // the page span of BIOSIS and CABI records
	default:
		p.Pages = first["AR"]
	}
	p.DOI = first["DI"]
	p.PMID = first["PM"]
	p.Abstract = first["AB"]
	p.URL, p.ArxivID = first["UR"], first["XA"]
	for tag, key := range map[string]string{"PU": biblio.ExtraPublisher, "PI": biblio.ExtraAddress, "SN": biblio.ExtraISSN, "BN": biblio.ExtraISBN, "LA": biblio.ExtraLanguage, "SE": biblio.ExtraSeries, "ET": biblio.ExtraEdition} {
		if v := first[tag]; v != "" {
			extra[key] = v
		}
	}
	for _, f := range fields {
		switch f.tag {
		case "TI", "SO", "PY", "VL", "IS", "BP", "EP", "DI", "PM", "AB", "DE", "ID", "N1", "UR", "XA",
			"PU", "PI", "SN", "BN", "LA", "SE", "ET", "AU", "AF", "BA", "BF", "BE", "CA", "CR",
			"BD", "IP", "MC", "MQ", "OR":
			continue
		case "AR":
			if bp != "" || ep != "" {
				break
			}
			continue
		}
		key := "wos_" + f.tag
		if _, done := extra[key]; done {
			continue
		}
		if listTags[f.tag] {
			extra[key] = strings.Join(lists[f.tag], "\n")
		} else if v := first[f.tag]; v != "" {
			extra[key] = v
		}
	}
	// PT and DT are kept where they differ from what the writer gives the
	// type anyway.
	def := typeToWoS[rec.Type]
	if first["PT"] == def[0] {
		delete(extra, "wos_PT")
	}
	if first["DT"] == def[1] {
		delete(extra, "wos_DT")
	}
	biblio.SetExtra(&rec, extra)
	biblio.Finish(&rec)
	return rec
}

var (
	emailRE  = regexp.MustCompile(`\s*\([^()]*@[^()]*\)`)
	initials = regexp.MustCompile(`^[A-Z]{1,3}$`)
)

// wosName reads "Last, First" without the e-mail address BIOSIS appends
// ("Medvedeff, Cassandra A. (x@ufl.edu)"), and Derwent's "YANG Y" as
// Yang with the initial Y.
func wosName(s string) biblio.Name {
	s = strings.TrimSpace(emailRE.ReplaceAllString(s, ""))
	if !strings.Contains(s, ",") {
		if i := strings.LastIndexByte(s, ' '); i > 0 && initials.MatchString(s[i+1:]) {
			return biblio.Name{Last: s[:i], First: s[i+1:]}
		}
	}
	return biblio.ParseName(s)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
