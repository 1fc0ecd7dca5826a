// Package jsonl reads and writes JSON Lines: one JSON object per line. It
// is both the format of the corpora Quarry's local library imports (arXiv
// listings, paperlists) and Quarry's own lossless export, so the reader
// recognises each corpus by its fields and the writer emits the snake_case
// keys the reader maps back.
//
// Invalid UTF-8 in a line is replaced with U+FFFD by encoding/json; it never
// stops the reader.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// Reader streams records from a JSON Lines file, so a corpus of any size
// reads in memory bounded by the line limit times a chunk: it reads a
// chunk of lines (at most chunkLines, or chunkBytes of text) and decodes
// them on every core, decoding being most of the cost of an import's
// parse.
type Reader struct {
	r       *bufio.Reader
	line    int
	max     int
	pending []biblio.Record // decoded, not yet returned
	err     error           // what ended the last chunk: returned after it
}

// A chunk is read before it is decoded in parallel: big enough that
// starting the decoders is noise, small enough to bound memory.
const (
	chunkLines = 512
	chunkBytes = 8 << 20
)

// NewReader reads records from r with the default limits. Decompression
// is the caller's job.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 1<<16), max: biblio.DefaultMaxLine}
}

// WithLimits sets the longest line read (Limits.MaxLine, one line being
// one record; zero: the default); call it before the first Next. A longer
// line is a Problem record and is discarded as it is read, never held.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.max = l.OrDefault().MaxLine
	return r
}

// Next returns the next record, skipping blank lines, or io.EOF at the end.
// A line that is not a JSON object, or is over the line limit, is a record
// with Problem set; only a failing read is an error, returned after the
// records read before it.
func (r *Reader) Next() (biblio.Record, error) {
	if len(r.pending) == 0 {
		if r.err != nil {
			return biblio.Record{}, r.err
		}
		r.readChunk()
		if len(r.pending) == 0 {
			return biblio.Record{}, r.err
		}
	}
	rec := r.pending[0]
	r.pending = r.pending[1:]
	return rec, nil
}

// readChunk reads the next chunk of lines and decodes them into pending,
// setting err when the input ended (io.EOF) or failed.
func (r *Reader) readChunk() {
	type raw struct {
		line []byte
		n    int
	}
	var lines []raw
	var size int
	r.pending = r.pending[:0]
	for len(lines) < chunkLines && size < chunkBytes {
		r.line += biblio.SkipBlankLines(r.r)
		line, long, err := biblio.ReadLine(r.r, r.max, nil)
		if err != nil && !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("jsonl: read line %d: %w", r.line+1, err)
			break
		}
		if len(line) == 0 {
			r.err = io.EOF
			break
		}
		r.line++
		if long {
			lines = append(lines, raw{nil, r.line})
			continue
		}
		if r.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			lines = append(lines, raw{line, r.line})
			size += len(line)
		}
	}
	out := make([]biblio.Record, len(lines))
	decode := func(i int) {
		if lines[i].line == nil {
			out[i] = biblio.Record{Line: lines[i].n, Problem: biblio.LineTooLong(r.max)}
			return
		}
		out[i] = MapLine(lines[i].line)
		out[i].Line = lines[i].n
	}
	workers := min(runtime.GOMAXPROCS(0), len(lines))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(lines); i += workers {
				decode(i)
			}
		})
	}
	wg.Wait()
	r.pending = out
}

// rawRecord is the union of the fields of the corpora we know and of
// Quarry's own export. Fields whose JSON type varies between corpora use
// the flexible types below.
type rawRecord struct {
	// common, and Quarry's export
	Title    string            `json:"title"`
	Authors  flexStrings       `json:"authors"`
	Year     flexYear          `json:"year"`
	Abstract string            `json:"abstract"`
	DOI      string            `json:"doi"`
	URL      string            `json:"url"`
	PMID     biblio.FlexString `json:"pmid"`
	Venue    string            `json:"venue"`
	Volume   biblio.FlexString `json:"volume"`
	Issue    biblio.FlexString `json:"issue"`
	Pages    biblio.FlexString `json:"pages"`
	Type     string            `json:"type"`
	Mark     string            `json:"mark"`
	Note     string            `json:"note"`
	Keywords flexStrings       `json:"keywords"`
	// Names and Extra are what Quarry's export adds: the authors' split
	// and the fields the papers table has no column for.
	Names []biblio.Name  `json:"names"`
	Extra map[string]any `json:"extra"`
	// arXiv listings (arxiv_cs_listings_*.jsonl)
	ArxivID     string      `json:"arxiv_id"`
	Categories  flexStrings `json:"categories"`
	Comment     string      `json:"comment"`
	FirstListed string      `json:"first_listed"`
	TimesListed int         `json:"times_listed"`
	// paperlists (paperlists_cs_venues.jsonl)
	SourceFile string            `json:"source_file"`
	PaperID    biblio.FlexString `json:"paper_id"`
	Track      string            `json:"track"`
	Status     string            `json:"status"`
	Arxiv      string            `json:"arxiv"`
	PDF        string            `json:"pdf"`
}

// Corpus kinds MapLine recognises by their fields.
const (
	KindArxivListing = "arxiv-listing" // arxiv_id + categories/first_listed
	KindPaperlists   = "paperlists"    // source_file/track/status (papercopilot)
	KindGeneric      = "generic"       // any object with a title, Quarry's export included
)

// kind names the corpus a decoded record comes from, by its fields.
func (r rawRecord) kind() string {
	switch {
	case r.ArxivID != "" && (len(r.Categories) > 0 || r.FirstListed != ""):
		return KindArxivListing
	case r.SourceFile != "" || r.Track != "" || r.Status != "":
		return KindPaperlists
	}
	return KindGeneric
}

// types lists the publication types the reader keeps as written; any other
// non-empty type is biblio.Misc.
var types = map[string]bool{
	biblio.Article: true, biblio.Conference: true, biblio.Preprint: true, biblio.Book: true,
	biblio.Chapter: true, biblio.Thesis: true, biblio.Report: true, biblio.Misc: true,
}

// MapLine decodes one JSON line and maps it onto a record, detecting the
// corpus from its fields, and finishes it with biblio.Finish. Rejected and
// withdrawn submissions (OpenReview venues list them) are skipped: they
// are not published papers.
func MapLine(line []byte) biblio.Record {
	var raw rawRecord
	if err := json.Unmarshal(line, &raw); err != nil {
		return biblio.Record{Problem: "malformed JSON"}
	}
	rec := biblio.Record{
		Paper: research.RawPaper{
			Title:    raw.Title,
			Authors:  raw.Authors,
			Year:     raw.Year.year,
			Abstract: raw.Abstract,
			DOI:      raw.DOI,
			URL:      raw.URL,
			PMID:     string(raw.PMID),
			Venue:    raw.Venue,
			Volume:   string(raw.Volume),
			Issue:    string(raw.Issue),
			Pages:    string(raw.Pages),
			ArxivID:  strings.TrimSpace(raw.ArxivID),
		},
		Keywords: raw.Keywords,
		Note:     raw.Note,
	}
	if len(raw.Names) == len(raw.Authors) {
		rec.Names = raw.Names
	}
	if t := strings.ToLower(strings.TrimSpace(raw.Type)); t != "" {
		rec.Type = biblio.Misc
		if types[t] {
			rec.Type = t
		}
	}
	if m := strings.ToLower(strings.TrimSpace(raw.Mark)); m == biblio.Relevant || m == biblio.Irrelevant {
		rec.Mark = m
	}
	p := &rec.Paper
	var extra map[string]any
	switch raw.kind() {
	case KindArxivListing:
		p.Venue = "arXiv" // as the arXiv source reports it, so dedup sees one spelling
		if rec.Type == "" {
			rec.Type = biblio.Preprint // a listing is a preprint by definition
		}
		if strings.TrimSpace(p.URL) == "" {
			p.URL = "https://arxiv.org/abs/" + p.ArxivID // arXiv's metadata policy: link to arxiv.org
		}
		extra = map[string]any{"categories": []string(raw.Categories), "first_listed": raw.FirstListed, "times_listed": raw.TimesListed}
		if raw.Comment != "" {
			extra["comment"] = raw.Comment
		}
	case KindPaperlists:
		if s := strings.ToLower(raw.Status); strings.Contains(s, "reject") || strings.Contains(s, "withdraw") {
			return biblio.Record{Skip: "status " + strings.TrimSpace(raw.Status)}
		}
		if p.ArxivID == "" {
			p.ArxivID = strings.TrimSpace(raw.Arxiv)
		}
		if rec.Type == "" {
			rec.Type = biblio.Conference // paperlists lists conferences' accepted papers
		}
		extra = map[string]any{}
		for k, v := range map[string]string{"source_file": raw.SourceFile, "paper_id": string(raw.PaperID), "track": raw.Track, "status": raw.Status, "pdf": raw.PDF} {
			if v != "" {
				extra[k] = v
			}
		}
	}
	for k, v := range raw.Extra {
		if extra == nil {
			extra = map[string]any{}
		}
		if _, ok := extra[k]; !ok {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		if b, err := json.Marshal(extra); err == nil {
			rec.Extra = b
		}
	}
	if p.Year == 0 {
		if w := biblio.NotAYear(raw.Year.text); w != "" {
			rec.Warnings = append(rec.Warnings, w)
		}
	}
	biblio.Finish(&rec)
	return rec
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

// flexYear accepts a number, a numeric string ("2021") or a date string
// that starts with its year ("2021-05-01"). Anything else leaves year 0 and
// keeps the value as written in text, so MapLine can warn of it
// (biblio.NotAYear) rather than import the record silently without a year;
// the record is still decoded, so one bad year does not read as malformed
// JSON.
type flexYear struct {
	year int
	text string
}

// leadingYearRE is a date string's year: four digits, then a non-digit.
var leadingYearRE = regexp.MustCompile(`^(\d{4})(?:\D|$)`)

func (f *flexYear) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b) // a number, or a value of the wrong type (true, [2020])
	}
	s = strings.TrimSpace(s)
	f.text = s
	if n, err := strconv.ParseFloat(s, 64); err == nil && n >= -1e9 && n <= 1e9 {
		f.year = int(n)
		return nil
	}
	if m := leadingYearRE.FindStringSubmatch(s); m != nil {
		f.year, _ = strconv.Atoi(m[1])
	}
	return nil
}

// line is one record as Quarry's export writes it: the keys MapLine reads
// back, in the order a person scanning the file wants them.
type line struct {
	ID       string   `json:"id,omitempty"`
	Title    string   `json:"title"`
	Authors  []string `json:"authors,omitempty"`
	Year     int      `json:"year,omitempty"`
	Venue    string   `json:"venue,omitempty"`
	Volume   string   `json:"volume,omitempty"`
	Issue    string   `json:"issue,omitempty"`
	Pages    string   `json:"pages,omitempty"`
	Abstract string   `json:"abstract,omitempty"`
	DOI      string   `json:"doi,omitempty"`
	ArxivID  string   `json:"arxiv_id,omitempty"`
	PMID     string   `json:"pmid,omitempty"`
	URL      string   `json:"url,omitempty"`
	Type     string   `json:"type,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
	Mark     string   `json:"mark,omitempty"`
	Note     string   `json:"note,omitempty"`
	// Names is written only where the file's split differs from what
	// biblio.ParseName guesses from the display form.
	Names []biblio.Name   `json:"names,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Writer writes one JSON object per line, Quarry's lossless export.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewWriter writes records to w; Close flushes.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Writer{w: bw, enc: enc}
}

// Write writes rec as one line.
func (w *Writer) Write(rec biblio.Record) error {
	p := rec.Paper
	err := w.enc.Encode(line{
		ID: p.ID, Title: p.Title, Authors: p.Authors, Year: p.Year, Venue: p.Venue,
		Volume: p.Volume, Issue: p.Issue, Pages: p.Pages, Abstract: p.Abstract,
		DOI: p.DOI, ArxivID: p.ArxivID, PMID: p.PMID, URL: p.URL,
		Type: rec.Type, Keywords: rec.Keywords, Mark: rec.Mark, Note: rec.Note,
		Names: biblio.NamesToKeep(rec), Extra: objectOrNil(rec.Extra),
	})
	if err != nil {
		return fmt.Errorf("jsonl: write: %w", err)
	}
	return nil
}

// Close flushes what is buffered; it does not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("jsonl: flush: %w", err)
	}
	return nil
}

// objectOrNil is raw when it is a non-empty JSON object.
func objectOrNil(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return nil
	}
	return raw
}
