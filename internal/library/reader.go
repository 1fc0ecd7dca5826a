package library

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// Reader streams Records from one file in any format biblio/codecs reads
// (BibTeX, RIS, CSL-JSON, MEDLINE, CSV, JSON Lines; gzipped or not) without
// loading it whole, so a corpus of any size imports in constant memory.
type Reader struct {
	in     *codecs.Opened
	file   io.Closer
	origin string
	// read counts the records returned, readable or not, so the end of a
	// file that had none can be told apart from the end of one that had.
	read int
}

// Open opens path for import; opts.Format forces a format, otherwise it is
// detected from the content.
func Open(path string, opts codecs.Options) (*Reader, error) {
	return OpenCounting(path, opts, nil)
}

// OpenCounting is Open that adds every byte read from the file to *read
// (the compressed bytes of a gzipped file, the only size known before
// reading it), so progress can be measured against the file's size. read
// may be nil. It is added atomically: Import reads in a goroutine of its
// own while progress is drawn from another.
func OpenCounting(path string, opts codecs.Options, read *int64) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) { // its message already says "open PATH: "
			err = pe.Err
		}
		return nil, fault.Errorf(fault.EInvalid, "open %s: %v", path, err)
	}
	var src io.Reader = f
	if read != nil {
		src = countingReader{r: f, n: read}
	}
	rd, err := NewReader(src, filepath.Base(path), opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	rd.file = f
	return rd, nil
}

// NewReader reads records from r; origin names the input in the records
// (papers.source) and in messages.
func NewReader(r io.Reader, origin string, opts codecs.Options) (*Reader, error) {
	in, err := codecs.NewReader(r, origin, opts)
	if err != nil {
		return nil, err
	}
	return &Reader{in: in, origin: origin}, nil
}

// Format is the format being read (given or detected).
func (r *Reader) Format() string { return r.in.Format }

// Close releases the file and the decompressor.
func (r *Reader) Close() error {
	err := r.in.Close()
	if r.file != nil {
		if cerr := r.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Next returns the next record or io.EOF at the end. A damaged file (a
// truncated gzip stream, an I/O error) is an error; one bad record is a
// Record with Problem set.
//
// A file that ends without a single record, readable or not, is an
// EInvalid error (NoRecords) instead of io.EOF: an import of it would
// report success having done nothing, and that is almost always an empty
// upload or a file read in the wrong format (RIS imported as BibTeX finds
// no "@" and so no records). Every import path (ImportFiles, Chain, Jobs,
// ReadAll) reads through Next, so all of them refuse it.
func (r *Reader) Next() (Record, error) {
	b, err := r.in.Next()
	if err != nil {
		if err == io.EOF {
			if r.read == 0 {
				return Record{}, r.noRecords()
			}
			return Record{}, io.EOF
		}
		return Record{}, fmt.Errorf("%s: %w", r.origin, err)
	}
	r.read++
	return fromBiblio(b, r.origin), nil
}

// noRecords is the error for a file without records: empty, or none found
// in the format it was read as, which may be the wrong one.
func (r *Reader) noRecords() error {
	if r.in.Empty {
		return fault.Errorf(fault.EInvalid, "%s is empty: there are no records to import", r.origin)
	}
	how := "the format chosen"
	if r.in.Detected {
		how = "detected from its content"
	}
	return fault.Errorf(fault.EInvalid, "%s: no records found reading it as %s (%s); check that the file is in that format, or choose the one it is in (%s)",
		r.origin, r.in.Format, how, strings.Join(biblio.Formats, ", "))
}

// fromBiblio keeps everything a file said about a paper: the fields the
// papers table has columns for go in Paper, the rest (type, keywords, a
// mark or note someone exported) in Extra next to the format's own extras.
func fromBiblio(b biblio.Record, origin string) Record {
	rec := Record{Line: b.Line, Paper: b.Paper, Origin: origin, Warnings: b.Warnings, Skip: b.Skip, Problem: b.Problem}
	extra := map[string]any{}
	if len(b.Extra) > 0 {
		_ = json.Unmarshal(b.Extra, &extra)
	}
	typ := b.Type
	if typ == biblio.Misc {
		typ = "" // "of no known kind": every writer writes a type, and misc is what they write for none
	}
	for k, v := range map[string]string{"type": typ, "mark": b.Mark, "note": b.Note} {
		if v != "" {
			extra[k] = v
		}
	}
	if len(b.Keywords) > 0 {
		extra["keywords"] = b.Keywords
	}
	if names := biblio.NamesToKeep(b); names != nil {
		extra[namesKey] = names
	}
	if len(extra) > 0 {
		if raw, err := json.Marshal(extra); err == nil {
			rec.Extra = raw
		}
	}
	return rec
}

// countingReader adds the bytes read through it to *n.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	atomic.AddInt64(c.n, int64(n)) // Import reads in a goroutine of its own
	return n, err
}

// namesKey is the papers.extra entry holding the authors' split where the
// file gave one that differs from what biblio.ParseName would guess from
// the display form (biblio.NamesToKeep; most names need nothing stored).
const namesKey = "names"

// ToBiblio turns a stored paper back into a file record: the type,
// keywords, author split and bibliographic fields an import kept in
// extra go back where the writers look for them.
func ToBiblio(p research.RawPaper, extra json.RawMessage) biblio.Record {
	r := biblio.Record{Paper: p}
	if len(extra) == 0 {
		return r
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(extra, &m) != nil {
		return r
	}
	take := func(key string, into any) {
		if v, ok := m[key]; ok {
			_ = json.Unmarshal(v, into)
			delete(m, key)
		}
	}
	take("type", &r.Type)
	take("keywords", &r.Keywords)
	take("mark", &r.Mark)
	take("note", &r.Note)
	take(namesKey, &r.Names)
	if len(r.Names) != len(p.Authors) {
		r.Names = nil
	}
	if len(m) > 0 {
		if b, err := json.Marshal(m); err == nil {
			r.Extra = b
		}
	}
	return r
}
