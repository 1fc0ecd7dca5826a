// Package codecs picks a bibliographic format's reader or writer by name,
// so the import command, the web upload, `quarry dedup` and the export API
// share one list of formats instead of each switching over them. It also
// undoes gzip and detects the format from content when none is given.
package codecs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/biblio/bibtex"
	"quarry/internal/biblio/csljson"
	"quarry/internal/biblio/csvfile"
	"quarry/internal/biblio/jsonl"
	"quarry/internal/biblio/medline"
	"quarry/internal/biblio/ris"
	"quarry/internal/biblio/textenc"
	"quarry/internal/biblio/wos"
	"quarry/internal/fault"
)

// ExportFormats are the formats the library page offers as download
// buttons, the ones reference managers import. Every name in biblio.Formats
// can be written (MEDLINE and JSON Lines too): messages about which formats
// are accepted name that list, not this one.
var ExportFormats = []string{biblio.BibTeX, biblio.RIS, biblio.CSLJSON, biblio.CSV}

// Options tune reading; the zero value detects everything.
type Options struct {
	// Format forces a format instead of detecting it from content.
	Format string
	// Encoding names the file's text encoding ("gbk", "shift_jis",
	// "utf-16le", "latin1", ...); "" or "auto" detects it (textenc).
	Encoding string
	// CSVColumns overrides the guessed CSV column mapping (field name →
	// header), see csvfile.NewReaderWithColumns.
	CSVColumns map[string]string
	// Limits bound each line, field and record the reader holds (zero
	// fields: biblio's defaults).
	Limits biblio.Limits
	// Gzip bounds what a gzipped input may decompress to (zero fields:
	// the defaults).
	Gzip GzipLimit
}

// GzipLimit bounds decompression, so a small upload cannot make Quarry
// read gigabytes: a gzipped input may decompress to at most
// max(Ratio × the compressed bytes read so far, Floor) bytes, and reading
// fails past that with an EInvalid error naming the limit. Counted as the
// stream is read, the ratio needs no file size (stdin, pipes). Real exports
// compress 5-15 times (RIS, BibTeX, JSON of abstracts; a file of repeated
// records perhaps 50); gzip's own ceiling is about 1030, which only
// made-up input such as a gigabyte of one letter reaches.
type GzipLimit struct {
	// Ratio is the largest decompressed/compressed ratio (default 100).
	Ratio int64
	// Floor is what any input may decompress to whatever its ratio
	// (default 64 MiB), so a small, very regular file still reads.
	Floor int64
}

// Defaults of GzipLimit.
const (
	DefaultGzipRatio = 100
	DefaultGzipFloor = 64 << 20
)

// OrDefault fills the zero fields of g with the defaults.
func (g GzipLimit) OrDefault() GzipLimit {
	if g.Ratio <= 0 {
		g.Ratio = DefaultGzipRatio
	}
	if g.Floor <= 0 {
		g.Floor = DefaultGzipFloor
	}
	return g
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gunzipLimited passes on decompressed bytes until they exceed the
// GzipLimit, then fails every read.
type gunzipLimited struct {
	gz         io.Reader
	compressed *countReader
	lim        GzipLimit
	out        int64
	name       string
	err        error
}

func (g *gunzipLimited) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.gz.Read(p)
	g.out += int64(n)
	if g.out > max(g.lim.Ratio*g.compressed.n, g.lim.Floor) {
		g.err = fault.Errorf(fault.EInvalid, "%s decompresses to more than %d times its compressed size (%s from %s so far): Quarry stops reading gzipped files past that limit (%d times, or %s for any file)",
			displayName(g.name), g.lim.Ratio, biblio.Size(g.out), biblio.Size(g.compressed.n), g.lim.Ratio, biblio.Size(g.lim.Floor))
		return 0, g.err
	}
	return n, err
}

// Opened is a reader over one input plus what was found out opening it.
type Opened struct {
	biblio.Reader
	// Format is the format read (given or detected).
	Format string
	// Detected says Format was detected from the content, not given.
	Detected bool
	// Encoding is the text encoding read ("utf-8", "gb18030", ...), or ""
	// when it could not be told and the bytes were passed on as they are.
	Encoding string
	// Empty says the input holds nothing but white space (after gzip), so
	// a caller can tell an empty upload from one in the wrong format when
	// neither yields a record.
	Empty  bool
	closer io.Closer
}

// Close releases the decompressor, if any; the caller closes its own input.
func (o *Opened) Close() error {
	if o.closer == nil {
		return nil
	}
	return o.closer.Close()
}

// headSize is how much of the input detection looks at: enough for a long
// comment block before the first BibTeX entry or a wide CSV header.
const headSize = 64 << 10

// NewReader opens r for reading records. name (a file name, may be empty)
// is only used in messages. gzip is recognised by its magic bytes and
// decompressed within opts.Gzip (past it, Next fails with an EInvalid
// error naming the limit); the format is detected from content unless opts.Format is set, and an
// unrecognisable input is an EInvalid error naming the formats to choose from.
func NewReader(r io.Reader, name string, opts Options) (*Opened, error) {
	br := bufio.NewReaderSize(r, headSize)
	o := &Opened{}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		compressed := &countReader{r: br}
		gz, err := gzip.NewReader(compressed)
		if err != nil {
			return nil, fault.Errorf(fault.EInvalid, "%s: bad gzip header: %v", name, err)
		}
		o.closer = gz
		br = bufio.NewReaderSize(&gunzipLimited{gz: gz, compressed: compressed, lim: opts.Gzip.OrDefault(), name: name}, headSize)
	}
	// Every format reads UTF-8: decode the text first, so GBK BibTeX and
	// UTF-16 RIS read like any other file.
	text, enc, err := textenc.Decode(br, opts.Encoding)
	if err != nil {
		o.Close()
		return nil, err
	}
	o.Encoding = enc
	if enc != textenc.UTF8 && enc != "" {
		br = bufio.NewReaderSize(text, headSize)
	}
	head, _ := br.Peek(headSize)
	blank := len(bytes.TrimSpace(head)) == 0
	o.Empty = blank && len(head) < headSize
	format := strings.ToLower(strings.TrimSpace(opts.Format))
	if format == "" {
		o.Detected = true
		format = biblio.Detect(head)
		if format == "" {
			if blank {
				format = biblio.JSONL // an empty file has no records in any format
			} else {
				o.Close()
				return nil, fault.Errorf(fault.EInvalid, "%s: cannot tell the file's format from its content; pass a format (one of %s)", displayName(name), strings.Join(biblio.Formats, ", "))
			}
		}
	}
	if format == biblio.RIS && biblio.Detect(head) == biblio.WoS {
		// Web of Science calls its plain-text export a "RIS-like" tagged
		// format and people choose RIS for it; it is read as what it is.
		format = biblio.WoS
	}
	lim := opts.Limits
	switch format {
	case biblio.BibTeX, "biblatex", "bib":
		o.Reader, o.Format = bibtex.NewReader(br).WithLimits(lim), biblio.BibTeX
	case biblio.RIS:
		o.Reader, o.Format = ris.NewReader(br).WithLimits(lim), biblio.RIS
	case biblio.CSLJSON, "csl-json", "csl":
		o.Reader, o.Format = csljson.NewReader(br).WithLimits(lim), biblio.CSLJSON
	case biblio.MEDLINE, "nbib", "pubmed":
		o.Reader, o.Format = medline.NewReader(br).WithLimits(lim), biblio.MEDLINE
	case biblio.CSV:
		o.Reader, o.Format = csvfile.NewReaderWithColumns(br, opts.CSVColumns).WithLimits(lim), biblio.CSV
	case biblio.JSONL, "ndjson":
		o.Reader, o.Format = jsonl.NewReader(br).WithLimits(lim), biblio.JSONL
	case biblio.WoS, "webofscience", "isi":
		o.Reader, o.Format = wos.NewReader(br).WithLimits(lim), biblio.WoS
	default:
		o.Close()
		return nil, UnknownFormat(format)
	}
	return o, nil
}

// CheckGzip reads a gzipped input to its end within lim, discarding what
// it decompresses, so a caller that reads the input later in the
// background (a web upload, imported as a job) can refuse a gzip bomb or
// a broken stream at once, with the same EInvalid error NewReader's
// reader would give mid-import. An input that is not gzipped passes
// unread beyond its first two bytes. It costs one decompression, bounded
// by the limit.
func CheckGzip(r io.Reader, name string, lim GzipLimit) error {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return nil
	}
	compressed := &countReader{r: br}
	gz, err := gzip.NewReader(compressed)
	if err != nil {
		return fault.Errorf(fault.EInvalid, "%s: bad gzip header: %v", displayName(name), err)
	}
	defer gz.Close()
	_, err = io.Copy(io.Discard, &gunzipLimited{gz: gz, compressed: compressed, lim: lim.OrDefault(), name: name})
	if err != nil && fault.ErrorCode(err) != fault.EInvalid {
		return fault.Errorf(fault.EInvalid, "%s: broken gzip stream: %v", displayName(name), err)
	}
	return err
}

// NewWriter returns a writer for format (any of biblio.Formats).
func NewWriter(w io.Writer, format string) (biblio.Writer, error) {
	switch strings.ToLower(format) {
	case biblio.BibTeX, "biblatex", "bib":
		return bibtex.NewWriter(w), nil
	case biblio.RIS:
		return ris.NewWriter(w), nil
	case biblio.CSLJSON, "csl-json", "csl":
		return csljson.NewWriter(w), nil
	case biblio.MEDLINE, "nbib", "pubmed":
		return medline.NewWriter(w), nil
	case biblio.CSV:
		return csvfile.NewWriter(w), nil
	case biblio.JSONL, "ndjson":
		return jsonl.NewWriter(w), nil
	case biblio.WoS, "webofscience", "isi":
		return wos.NewWriter(w), nil
	}
	return nil, UnknownFormat(format)
}

// UnknownFormat is the error for a format name Quarry does not know, or
// for none ("") where one is required. It names every format NewReader and
// NewWriter accept (biblio.Formats), as a message and as a "format" field
// error for forms.
func UnknownFormat(format string) error {
	formats := strings.Join(biblio.Formats, ", ")
	if strings.TrimSpace(format) == "" {
		return &fault.Error{Code: fault.EInvalid, Message: "choose a format (one of " + formats + ")",
			Fields: map[string]string{"format": "one of " + formats}}
	}
	return &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("unknown format %q (supported: %s)", format, formats),
		Fields: map[string]string{"format": fmt.Sprintf("%q is not one of %s", format, formats)}}
}

// FormatForPath guesses an output format from a file name's extension, for
// `quarry dedup --out merged.ris`; "" if the extension says nothing.
func FormatForPath(path string) string {
	name := strings.ToLower(strings.TrimSuffix(path, ".gz"))
	switch filepath.Ext(name) {
	case ".bib", ".bibtex":
		return biblio.BibTeX
	case ".ris":
		return biblio.RIS
	case ".json":
		return biblio.CSLJSON
	case ".nbib", ".medline":
		return biblio.MEDLINE
	case ".csv", ".tsv":
		return biblio.CSV
	case ".jsonl", ".ndjson":
		return biblio.JSONL
	}
	return ""
}

// Extension is the file extension downloads in format get.
func Extension(format string) string {
	switch format {
	case biblio.BibTeX:
		return ".bib"
	case biblio.RIS:
		return ".ris"
	case biblio.CSLJSON:
		return ".json"
	case biblio.MEDLINE:
		return ".nbib"
	case biblio.CSV:
		return ".csv"
	case biblio.JSONL:
		return ".jsonl"
	case biblio.WoS:
		return ".txt"
	}
	return ""
}

// ContentType is the media type of format, for downloads.
func ContentType(format string) string {
	switch format {
	case biblio.BibTeX:
		return "application/x-bibtex; charset=utf-8"
	case biblio.RIS:
		return "application/x-research-info-systems; charset=utf-8"
	case biblio.CSLJSON:
		return "application/vnd.citationstyles.csl+json; charset=utf-8"
	case biblio.CSV:
		return "text/csv; charset=utf-8"
	case biblio.JSONL:
		return "application/jsonl; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

func displayName(name string) string {
	if name == "" {
		return "input"
	}
	return name
}

// WriteAll writes records to w in format, for exports of a known list.
func WriteAll(w io.Writer, format string, records []biblio.Record) error {
	wr, err := NewWriter(w, format)
	if err != nil {
		return err
	}
	for i, r := range records {
		if err := wr.Write(r); err != nil {
			return fmt.Errorf("write record %d: %w", i+1, err)
		}
	}
	return wr.Close()
}
