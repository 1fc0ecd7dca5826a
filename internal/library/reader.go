package library

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/skills"
)

// FormatJSONL is the one input format so far: one JSON object per line,
// optionally gzipped. Formats are named so the command's --format flag has
// something to check against when others (BibTeX, RIS) arrive.
const FormatJSONL = "jsonl"

// Reader streams Records from a JSON Lines file without loading it whole,
// so a corpus of any size imports in constant memory.
type Reader struct {
	r      *bufio.Reader
	closer io.Closer
	origin string
	line   int
}

// Open opens path for import. format is FormatJSONL or "" (detect from the
// extension and content); gzip is recognised by its magic bytes whatever
// the name says.
func Open(path, format string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, engine.Errorf(engine.EInvalid, "open %s: %v", path, err)
	}
	rd, err := NewReader(f, filepath.Base(path), format)
	if err != nil {
		f.Close()
		return nil, err
	}
	rd.closer = multiCloser{rd.closer, f}
	return rd, nil
}

// NewReader reads records from r; origin names the input in the records
// (papers.source) and in messages.
func NewReader(r io.Reader, origin, format string) (*Reader, error) {
	if format != "" && format != FormatJSONL {
		return nil, engine.Errorf(engine.EInvalid, "unknown import format %q (supported: %s)", format, FormatJSONL)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	rd := &Reader{origin: origin}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, engine.Errorf(engine.EInvalid, "%s: bad gzip header: %v", origin, err)
		}
		rd.closer = gz
		br = bufio.NewReaderSize(gz, 1<<20)
	}
	rd.r = br
	if format == "" {
		// Detect: the first non-blank byte of a JSON Lines file is '{'. An
		// empty file is fine (it imports nothing).
		head, _ := br.Peek(4096)
		if i := bytes.IndexFunc(head, func(r rune) bool { return !strings.ContainsRune(" \t\r\n", r) }); i >= 0 && head[i] != '{' {
			return nil, engine.Errorf(engine.EInvalid, "%s does not look like JSON Lines (one JSON object per line); pass --format jsonl to force it", origin)
		}
	}
	return rd, nil
}

// Close releases the file and the decompressor.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Next returns the next record, skipping blank lines, or io.EOF at the end.
// A truncated gzip stream is an error: the file is damaged, not one line.
func (r *Reader) Next() (Record, error) {
	for {
		line, err := r.r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return Record{}, io.EOF
			}
			return Record{}, fmt.Errorf("%s: read after line %d: %w", r.origin, r.line, err)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Record{}, fmt.Errorf("%s: read line %d: %w", r.origin, r.line+1, err)
		}
		r.line++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec := MapLine(line)
		rec.Line = r.line
		rec.Origin = r.origin
		return rec, nil
	}
}

// rawRecord is the union of the fields of the corpora we know. Fields whose
// JSON type varies between corpora use the flexible types below.
type rawRecord struct {
	// common
	Title    string      `json:"title"`
	Authors  flexStrings `json:"authors"`
	Year     flexInt     `json:"year"`
	Abstract string      `json:"abstract"`
	DOI      string      `json:"doi"`
	URL      string      `json:"url"`
	PMID     flexString  `json:"pmid"`
	Venue    string      `json:"venue"`
	// arXiv listings (arxiv_cs_listings_*.jsonl)
	ArxivID     string      `json:"arxiv_id"`
	Categories  flexStrings `json:"categories"`
	Comment     string      `json:"comment"`
	FirstListed string      `json:"first_listed"`
	TimesListed int         `json:"times_listed"`
	// paperlists (paperlists_cs_venues.jsonl)
	SourceFile string      `json:"source_file"`
	PaperID    flexString  `json:"paper_id"`
	Track      string      `json:"track"`
	Status     string      `json:"status"`
	Keywords   flexStrings `json:"keywords"`
	Arxiv      string      `json:"arxiv"`
	PDF        string      `json:"pdf"`
}

// Corpus kinds MapLine recognises by their fields.
const (
	KindArxivListing = "arxiv-listing" // arxiv_id + categories/first_listed
	KindPaperlists   = "paperlists"    // source_file/track/status (papercopilot)
	KindGeneric      = "generic"       // any object with a title
)

// Kind names the corpus a decoded record comes from, by its fields.
func (r rawRecord) kind() string {
	switch {
	case r.ArxivID != "" && (len(r.Categories) > 0 || r.FirstListed != ""):
		return KindArxivListing
	case r.SourceFile != "" || r.Track != "" || r.Status != "":
		return KindPaperlists
	}
	return KindGeneric
}

// MapLine decodes one JSON line and maps it onto a paper, detecting the
// corpus from its fields. Rejected and withdrawn submissions (OpenReview
// venues list them) are skipped: they are not published papers.
func MapLine(line []byte) Record {
	var raw rawRecord
	if err := json.Unmarshal(line, &raw); err != nil {
		return Record{Problem: "malformed JSON"}
	}
	p := skills.RawPaper{
		Title:    clean(raw.Title),
		Authors:  cleanList(raw.Authors),
		Year:     int(raw.Year),
		Abstract: strings.TrimSpace(raw.Abstract),
		DOI:      strings.TrimSpace(raw.DOI),
		URL:      strings.TrimSpace(raw.URL),
		PMID:     strings.TrimSpace(string(raw.PMID)),
		Venue:    clean(raw.Venue),
		ArxivID:  strings.TrimSpace(raw.ArxivID),
	}
	var extra map[string]any
	switch raw.kind() {
	case KindArxivListing:
		p.Venue = "arXiv" // as the arXiv source reports it, so dedup sees one spelling
		if p.URL == "" {
			p.URL = "https://arxiv.org/abs/" + p.ArxivID // arXiv's metadata policy: link to arxiv.org
		}
		extra = map[string]any{"categories": []string(raw.Categories), "first_listed": raw.FirstListed, "times_listed": raw.TimesListed}
		if raw.Comment != "" {
			extra["comment"] = raw.Comment
		}
	case KindPaperlists:
		if s := strings.ToLower(raw.Status); strings.Contains(s, "reject") || strings.Contains(s, "withdraw") {
			return Record{Skip: "status " + strings.TrimSpace(raw.Status)}
		}
		if p.ArxivID == "" {
			p.ArxivID = strings.TrimSpace(raw.Arxiv)
		}
		extra = map[string]any{}
		for k, v := range map[string]string{"source_file": raw.SourceFile, "paper_id": string(raw.PaperID), "track": raw.Track, "status": raw.Status, "pdf": raw.PDF} {
			if v != "" {
				extra[k] = v
			}
		}
		if len(raw.Keywords) > 0 {
			extra["keywords"] = []string(raw.Keywords)
		}
	}
	if p.Title == "" {
		return Record{Problem: "missing title"}
	}
	if p.Year < 0 || p.Year > 3000 {
		return Record{Problem: "year out of range"}
	}
	p.ID = skills.StableID(p)
	rec := Record{Paper: p}
	if len(extra) > 0 {
		b, err := json.Marshal(extra)
		if err == nil {
			rec.Extra = b
		}
	}
	return rec
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

func cleanList(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s = clean(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// flexStrings accepts a list of strings, a list of {"name": ...} objects,
// or one string separated by ';' (paperlists writes keywords that way).
type flexStrings []string

func (f *flexStrings) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		for _, part := range strings.Split(s, ";") {
			if part = strings.TrimSpace(part); part != "" {
				*f = append(*f, part)
			}
		}
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	for _, item := range list {
		var s string
		if err := json.Unmarshal(item, &s); err == nil {
			*f = append(*f, s)
			continue
		}
		var named struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(item, &named); err != nil {
			return err
		}
		*f = append(*f, named.Name)
	}
	return nil
}

// flexInt accepts a number or a numeric string ("2021"); anything else
// unreadable counts as unknown (0) rather than failing the record.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		return nil
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	*f = flexInt(n)
	return nil
}

// flexString accepts a string or a number (identifiers are written both ways).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = flexString(n.String())
	return nil
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
