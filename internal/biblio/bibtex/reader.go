package bibtex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// Reader streams records from a BibTeX or BibLaTeX file; it implements
// biblio.Reader. @string macros apply to the entries after them, @preamble
// and @comment are skipped, and text outside entries is ignored.
type Reader struct {
	br     *bufio.Reader
	line   int
	bol    bool // the next byte starts a line
	n      int  // bytes read in the current entry
	err    error
	macros map[string]string
	// macroBytes is the size of every macro defined so far, bounded by
	// lim.MaxRecord so @string definitions cannot add up without end.
	macroBytes int
	buf        []byte
	lim        biblio.Limits
	// queue holds records in file order until they can be returned: an
	// entry with a crossref waits for the entry it names, which BibTeX
	// wants after it, and every record read after it waits too, so records
	// still come in line order. queueBytes (the raw size of what is
	// queued) is bounded by crossrefBudget; past it the oldest waiting
	// entry is given up on, imported without the fields it would inherit
	// and with a warning.
	queue      []*queued
	queueBytes int
	// parents are the raw fields of the entries read so far, by lower-case
	// key, for entries with a crossref to an earlier one; bounded by
	// crossrefBudget too, after which later entries are not kept.
	parents     map[string]fields
	parentBytes int
}

// queued is a record waiting in Reader.queue: ready, or an entry waiting
// for the entry its crossref names (ref).
type queued struct {
	rec           biblio.Record
	typ, key, ref string
	f             fields
	line, size    int
	ready         bool
}

// crossrefBudget is how many bytes of entries the Reader keeps for
// crossrefs, in each of its queue and its parents.
func (r *Reader) crossrefBudget() int { return 4 * r.lim.MaxRecord }

// NewReader returns a Reader over r with the default limits; the caller
// has already undone any compression.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), line: 1, bol: true, macros: map[string]string{}, parents: map[string]fields{}, lim: biblio.Limits{}.OrDefault()}
}

// WithLimits sets the limits (zero fields: the defaults); call it before
// the first Next. An entry over Limits.MaxRecord bytes, so a file with an
// unclosed brace and no further entry cannot make the reader hold the
// rest of the file, or a field value over Limits.MaxLine once its macros
// are expanded (macros can double a value at each step), is a Problem
// record; so is a @string that would take the macros past MaxRecord.
func (r *Reader) WithLimits(l biblio.Limits) *Reader {
	r.lim = l.OrDefault()
	return r
}

// syntaxError is a malformed entry; next says the reader already stands at
// the start of the following entry, so it need not resynchronise.
type syntaxError struct {
	msg  string
	next bool
}

func (e *syntaxError) Error() string { return e.msg }

func syntaxf(format string, args ...any) *syntaxError {
	return &syntaxError{msg: fmt.Sprintf(format, args...)}
}

// Next returns the next entry as a record, io.EOF at the end, or an error
// only when reading the input fails.
func (r *Reader) Next() (biblio.Record, error) {
	for {
		if rec, ok := r.pop(); ok {
			return rec, nil
		}
		if r.err != nil {
			return biblio.Record{}, r.err
		}
		b, err := r.br.ReadByte()
		if err != nil {
			if err != io.EOF {
				r.err = err
				return biblio.Record{}, err
			}
			if r.giveUpAll() {
				continue
			}
			return biblio.Record{}, err
		}
		switch b {
		case '\n':
			r.line++
			r.bol = true
			continue
		case '%':
			// A comment line, often a commented-out entry.
			r.skipLine()
		case '@':
			rec, ok := r.command()
			if r.err != nil {
				return biblio.Record{}, r.err
			}
			if ok {
				r.queue = append(r.queue, &queued{rec: rec, ready: true})
			}
		default:
			r.bol = false
		}
	}
}

func (r *Reader) skipLine() {
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			if err != io.EOF {
				r.err = err
			}
			return
		}
		if b == '\n' {
			r.line++
			r.bol = true
			return
		}
	}
}

// resync skips to the next line that starts an entry, or to the end.
func (r *Reader) resync() {
	for {
		if r.bol && r.entryAhead() {
			return
		}
		b, err := r.br.ReadByte()
		if err != nil {
			if err != io.EOF {
				r.err = err
			}
			return
		}
		r.bol = b == '\n'
		if r.bol {
			r.line++
		}
	}
}

// entryAhead reports whether the input at the start of a line opens an
// entry: optional blanks, '@', a type name and '{' or '('.
func (r *Reader) entryAhead() bool {
	bs, _ := r.br.Peek(96)
	i := 0
	for i < len(bs) && (bs[i] == ' ' || bs[i] == '\t') {
		i++
	}
	if i >= len(bs) || bs[i] != '@' {
		return false
	}
	i++
	start := i
	for i < len(bs) && isLetter(bs[i]) {
		i++
	}
	if i == start {
		return false
	}
	for i < len(bs) && (bs[i] == ' ' || bs[i] == '\t') {
		i++
	}
	return i < len(bs) && (bs[i] == '{' || bs[i] == '(')
}

// get reads one byte of an entry. The end of the input, an entry over
// lim.MaxRecord bytes, or a line that starts the next entry end the entry with a
// syntaxError; I/O errors are kept in r.err.
func (r *Reader) get() (byte, error) {
	b, err := r.br.ReadByte()
	if err != nil {
		if err != io.EOF {
			r.err = err
			return 0, err
		}
		return 0, &syntaxError{msg: "entry not closed before the end of the file"}
	}
	r.n++
	if r.n > r.lim.MaxRecord {
		return 0, syntaxf("entry longer than %s (the record limit)", biblio.Size(int64(r.lim.MaxRecord)))
	}
	r.bol = b == '\n'
	if r.bol {
		r.line++
		if r.entryAhead() {
			return 0, &syntaxError{msg: fmt.Sprintf("entry not closed (unbalanced braces or quotes?) before the next entry at line %d", r.line), next: true}
		}
	}
	return b, nil
}

// peekAfterSpace returns the next byte that is not a blank without
// consuming anything (within the reader's buffer).
func (r *Reader) peekAfterSpace() (byte, bool) {
	for n := 1; ; n++ {
		bs, _ := r.br.Peek(n)
		if len(bs) < n {
			return 0, false
		}
		if c := bs[n-1]; !isSpace(c) {
			return c, true
		}
	}
}

func (r *Reader) peek() (byte, bool) {
	bs, _ := r.br.Peek(1)
	if len(bs) == 0 {
		return 0, false
	}
	return bs[0], true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (r *Reader) skipSpace() error {
	for {
		c, ok := r.peek()
		if !ok || !isSpace(c) {
			return nil
		}
		if _, err := r.get(); err != nil {
			return err
		}
	}
}

// expect reads the next non-blank byte and checks it is one of want.
func (r *Reader) expect(want string) (byte, error) {
	if err := r.skipSpace(); err != nil {
		return 0, err
	}
	c, ok := r.peek()
	if !ok {
		_, err := r.get()
		return 0, err
	}
	if strings.IndexByte(want, c) < 0 {
		quoted := make([]string, len(want))
		for i := range want {
			quoted[i] = fmt.Sprintf("%q", want[i])
		}
		return 0, syntaxf("expected %s, found %q", strings.Join(quoted, " or "), c)
	}
	return r.get()
}

// isNameByte is a byte of an entry type, field name or macro name.
func isNameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte("_-:.+/'!?*&;<>|[]", c) >= 0
}

func (r *Reader) name() (string, error) {
	r.buf = r.buf[:0]
	for {
		c, ok := r.peek()
		if !ok || !isNameByte(c) {
			return string(r.buf), nil
		}
		if _, err := r.get(); err != nil {
			return "", err
		}
		r.buf = append(r.buf, c)
	}
}

// command reads what follows an '@' outside entries. ok is false for
// @comment, @preamble, a well-formed @string and an '@' that opens nothing
// (an e-mail address in a note between entries).
func (r *Reader) command() (biblio.Record, bool) {
	line := r.line
	r.n = 0
	typ, err := r.name()
	if err != nil || typ == "" {
		return biblio.Record{}, false
	}
	typ = strings.ToLower(typ)
	for {
		c, ok := r.peek()
		if !ok || !isSpace(c) {
			break
		}
		if _, err := r.get(); err != nil {
			return biblio.Record{}, false
		}
	}
	open, ok := r.peek()
	if !ok || open != '{' && open != '(' {
		return biblio.Record{}, false
	}
	if _, err := r.get(); err != nil {
		return biblio.Record{}, false
	}
	closer := byte('}')
	if open == '(' {
		closer = ')'
	}
	switch typ {
	case "comment", "preamble":
		if err := r.skipBody(closer); err != nil {
			r.recover(err)
		}
		return biblio.Record{}, false
	case "string":
		if err := r.macro(closer); err != nil {
			r.recover(err)
			return biblio.Record{Line: line, Problem: "malformed @string: " + err.Error()}, r.err == nil
		}
		return biblio.Record{}, false
	}
	key, f, err := r.entry(closer)
	if err != nil {
		r.recover(err)
		rec := biblio.Record{Line: line, Problem: err.Error()}
		if key != "" {
			rec.Problem = fmt.Sprintf("entry %q: %s", key, err.Error())
		}
		return rec, r.err == nil
	}
	r.add(typ, key, f, line)
	return biblio.Record{}, false
}

// add queues an entry read in full, resolving crossrefs: entries waiting
// for this one inherit its fields now, and this one inherits from the
// entry its crossref names if that was read before; otherwise it waits.
func (r *Reader) add(typ, key string, f fields, line int) {
	size := len(typ) + len(key)
	for k, v := range f {
		size += len(k) + len(v)
	}
	lk := strings.ToLower(strings.TrimSpace(key))
	if lk != "" {
		for _, q := range r.queue {
			if !q.ready && q.ref == lk {
				q.rec, q.ready, q.f = built(q.typ, q.key, inherit(q.f, f), q.line), true, nil
			}
		}
		if _, dup := r.parents[lk]; !dup && r.parentBytes+size <= r.crossrefBudget() {
			r.parents[lk] = f
			r.parentBytes += size
		}
	}
	q := &queued{typ: typ, key: key, line: line, size: size}
	ref := strings.ToLower(strings.TrimSpace(decodeVerbatim(unwrapGroup(f["crossref"]))))
	if p, ok := r.parents[ref]; ok && ref != lk {
		f, ref = inherit(f, p), ""
	}
	if ref == "" || ref == lk {
		q.rec, q.ready = built(typ, key, f, line), true
	} else {
		q.f, q.ref = f, ref
	}
	r.queue = append(r.queue, q)
	r.queueBytes += size
	for r.queueBytes > r.crossrefBudget() {
		if !r.giveUpOldest(fmt.Sprintf("not found within %s after the entry", biblio.Size(int64(r.crossrefBudget())))) {
			break
		}
	}
}

// built is an entry's finished record. The entry type and citation key
// stay in Extra only where the Writer would not give them back by itself
// (an @inbook, which it would write as @incollection; a key of the file's
// own): an export re-imported into the same library then reads as
// unchanged rather than as updated with a bibtex_key it did not have.
func built(typ, key string, f fields, line int) biblio.Record {
	rec := buildRecord(typ, key, f)
	rec.Line = line
	biblio.Finish(&rec)
	if rec.Problem == "" && len(rec.Extra) > 0 {
		drop := map[string]string{}
		if canonical, _ := entryFor(rec.Type); typ == canonical {
			drop["bibtex_type"] = ""
		}
		if generatedKey(key, rec) {
			drop["bibtex_key"] = ""
		}
		if len(drop) > 0 {
			biblio.SetExtra(&rec, drop)
		}
	}
	return rec
}

// giveUpOldest imports the first waiting entry without what it would
// inherit, with a warning saying why; false if none waits.
func (r *Reader) giveUpOldest(why string) bool {
	for _, q := range r.queue {
		if !q.ready {
			q.rec, q.ready = built(q.typ, q.key, q.f, q.line), true
			if q.rec.Problem == "" {
				q.rec.Warnings = append(q.rec.Warnings, fmt.Sprintf("crossref %q: %s; imported without the fields it would inherit", q.ref, why))
			}
			q.f = nil
			return true
		}
	}
	return false
}

// giveUpAll ends the file: every entry still waiting names a key no entry
// has. It reports whether records are left to return.
func (r *Reader) giveUpAll() bool {
	for r.giveUpOldest("no entry with that key in the file") {
	}
	return len(r.queue) > 0
}

// pop returns the first queued record if it is ready.
func (r *Reader) pop() (biblio.Record, bool) {
	if len(r.queue) == 0 || !r.queue[0].ready {
		return biblio.Record{}, false
	}
	q := r.queue[0]
	r.queue[0] = nil
	r.queue = r.queue[1:]
	r.queueBytes -= q.size
	return q.rec, true
}

// inherit gives a child entry the fields of the entry its crossref names
// that it does not have itself, as BibTeX and biber do: the parent's title
// becomes the child's booktitle (or journaltitle under an @article), and
// the parent's identity (key, ids, its own crossref) is not inherited.
func inherit(child, parent fields) fields {
	m := make(fields, len(child)+len(parent))
	for k, v := range child {
		m[k] = v
	}
	// The parent's title first: it is the child's booktitle even when the
	// parent has a booktitle of its own (biber's rule; BibTeX's would copy
	// that booktitle), and map order must not decide.
	if v, ok := parent["title"]; ok && !m.has("booktitle") && !m.has("journal") && !m.has("journaltitle") {
		m["booktitle"] = v
	}
	for k, v := range parent {
		switch k {
		case "crossref", "xref", "ids", "key", "label", "entryset", "related", "keywords", "abstract", "doi", "url", "pages", "note", "title", "subtitle":
			continue
		}
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// recover resynchronises after a malformed entry.
func (r *Reader) recover(err error) {
	if se, ok := err.(*syntaxError); ok && !se.next {
		r.resync()
	}
}

func (r *Reader) skipBody(closer byte) error {
	r.buf = r.buf[:0]
	if closer == ')' {
		for {
			c, err := r.get()
			if err != nil {
				return err
			}
			switch c {
			case ')':
				return nil
			case '{':
				if err := r.braced(); err != nil {
					return err
				}
			}
		}
	}
	return r.braced()
}

func (r *Reader) macro(closer byte) error {
	if err := r.skipSpace(); err != nil {
		return err
	}
	name, err := r.name()
	if err != nil {
		return err
	}
	if name == "" {
		return syntaxf("missing macro name")
	}
	if _, err := r.expect("="); err != nil {
		return err
	}
	v, err := r.value()
	if err != nil {
		return err
	}
	if _, err := r.expect(string(closer) + ","); err != nil {
		return err
	}
	if c, ok := r.peek(); ok && c == closer {
		_, _ = r.get()
	}
	if r.macroBytes += len(name) + len(v); r.macroBytes > r.lim.MaxRecord {
		return syntaxf("@string macros longer than %s in all (the record limit)", biblio.Size(int64(r.lim.MaxRecord)))
	}
	r.macros[strings.ToLower(name)] = v
	return nil
}

// fields are an entry's raw (undecoded) field values by lower-case name.
type fields map[string]string

func (f fields) has(name string) bool { _, ok := f[name]; return ok }
func (f fields) raw(name string) string {
	return f[name]
}

// entry reads an entry's key and fields up to its closing delimiter.
func (r *Reader) entry(closer byte) (string, fields, error) {
	f := fields{}
	if err := r.skipSpace(); err != nil {
		return "", nil, err
	}
	r.buf = r.buf[:0]
	for {
		c, ok := r.peek()
		if !ok || c == ',' || c == closer || c == '=' || isSpace(c) || c == '{' || c == '}' || c == '"' {
			break
		}
		if _, err := r.get(); err != nil {
			return "", nil, err
		}
		r.buf = append(r.buf, c)
	}
	key := string(r.buf)
	if err := r.skipSpace(); err != nil {
		return key, nil, err
	}
	if c, ok := r.peek(); ok && c == '=' {
		// No key: what we read was the first field's name.
		if err := r.field(f, key); err != nil {
			return "", nil, err
		}
		key = ""
	}
	for {
		c, err := r.expect("," + string(closer))
		if err != nil {
			return key, nil, err
		}
		if c == closer {
			return key, f, nil
		}
		if err := r.skipSpace(); err != nil {
			return key, nil, err
		}
		c, ok := r.peek()
		if ok && (c == closer || c == ',') {
			continue
		}
		name, err := r.name()
		if err != nil {
			return key, nil, err
		}
		if name == "" {
			if !ok {
				_, err := r.get()
				return key, nil, err
			}
			return key, nil, syntaxf("expected a field name, found %q", c)
		}
		if err := r.field(f, name); err != nil {
			return key, nil, err
		}
	}
}

// field reads "= value" after a field name.
func (r *Reader) field(f fields, name string) error {
	if _, err := r.expect("="); err != nil {
		return err
	}
	v, err := r.value()
	if err != nil {
		return err
	}
	name = strings.ToLower(name)
	if !f.has(name) {
		f[name] = v
	}
	return nil
}

// value reads a field value: braced or quoted strings, numbers and macro
// names joined by '#'. It returns the raw text, braces inside kept.
func (r *Reader) value() (string, error) {
	var parts []string
	size := 0
	for {
		if size > r.lim.MaxLine {
			return "", syntaxf("a field value longer than %s (the field limit)", biblio.Size(int64(r.lim.MaxLine)))
		}
		if err := r.skipSpace(); err != nil {
			return "", err
		}
		c, ok := r.peek()
		if !ok {
			_, err := r.get()
			return "", err
		}
		r.buf = r.buf[:0]
		switch {
		case c == '{':
			_, _ = r.get()
			if err := r.braced(); err != nil {
				return "", err
			}
			parts, size = append(parts, string(r.buf)), size+len(r.buf)
		case c == '"':
			_, _ = r.get()
			if err := r.quoted(); err != nil {
				return "", err
			}
			parts, size = append(parts, string(r.buf)), size+len(r.buf)
		case isNameByte(c):
			name, err := r.name()
			if err != nil {
				return "", err
			}
			if name[0] >= '0' && name[0] <= '9' {
				parts = append(parts, name)
			} else {
				v, ok := r.lookup(name)
				if !ok && len(parts) == 0 {
					if c, more := r.peekAfterSpace(); !more || c != '#' {
						// An undefined macro that is the whole value
						// (journal = IEEE_J_PROC from a file whose
						// @string definitions were left out) keeps its
						// name, the only hint of what it stood for.
						v = name
					}
				}
				parts = append(parts, v)
			}
			size += len(parts[len(parts)-1])
		default:
			return "", syntaxf("expected a value, found %q", c)
		}
		if err := r.skipSpace(); err != nil {
			return "", err
		}
		if c, ok := r.peek(); !ok || c != '#' {
			if size > r.lim.MaxLine {
				return "", syntaxf("a field value longer than %s (the field limit)", biblio.Size(int64(r.lim.MaxLine)))
			}
			return strings.Join(parts, ""), nil
		}
		_, _ = r.get()
	}
}

var months = map[string]string{
	"jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May", "jun": "June",
	"jul": "July", "aug": "August", "sep": "September", "oct": "October", "nov": "November", "dec": "December",
}

// lookup expands a macro; an undefined one is empty, as in BibTeX, and ok
// is false.
func (r *Reader) lookup(name string) (string, bool) {
	key := strings.ToLower(name)
	if v, ok := r.macros[key]; ok {
		return v, true
	}
	m, ok := months[key]
	return m, ok
}

// braced appends the text up to the brace that closes an already opened
// group to r.buf. Escaped braces (\{ \}) do not count.
func (r *Reader) braced() error { return r.delimited(false) }

// quoted appends the text up to the closing double quote to r.buf.
func (r *Reader) quoted() error { return r.delimited(true) }

func (r *Reader) delimited(quote bool) error {
	depth := 0
	if !quote {
		depth = 1
	}
	for {
		c, err := r.get()
		if err != nil {
			return err
		}
		switch c {
		case '\\':
			n, ok := r.peek()
			if quote && ok && n == '"' {
				// \"u is an umlaut; \" before anything else is taken
				// for an escaped quote, which BibTeX itself does not allow.
				_, _ = r.get()
				if bs, _ := r.br.Peek(1); len(bs) == 1 && strings.IndexByte("aeiouyAEIOUY{\\", bs[0]) >= 0 {
					r.buf = append(r.buf, '\\')
				}
				r.buf = append(r.buf, '"')
				continue
			}
			r.buf = append(r.buf, c)
			if !ok || n != '{' && n != '}' && n != '\\' {
				continue
			}
			_, _ = r.get()
			c = n
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 && !quote {
				return nil
			}
			if depth < 0 {
				return syntaxf("unbalanced '}' in a quoted value")
			}
		case '"':
			if quote && depth == 0 {
				return nil
			}
		}
		r.buf = append(r.buf, c)
	}
}

var arxivIDRE = regexp.MustCompile(`(?i)^(arxiv:)?(\d{4}\.\d{4,5}|[a-z-]+(\.[a-z]{2})?/\d{7})(v\d+)?$`)

// buildRecord maps an entry's fields onto a record.
func buildRecord(typ, key string, f fields) biblio.Record {
	used := map[string]bool{}
	text := func(names ...string) string {
		for _, n := range names {
			if v, ok := f[n]; ok {
				used[n] = true
				if s := decodeText(v, false); strings.TrimSpace(s) != "" {
					return s
				}
			}
		}
		return ""
	}
	verbatim := func(name string) string {
		v, ok := f[name]
		if !ok {
			return ""
		}
		used[name] = true
		return decodeVerbatim(unwrapGroup(v))
	}
	var rec biblio.Record
	p := &rec.Paper
	p.Title = text("title")
	if sub := text("subtitle"); sub != "" {
		p.Title = joinSubtitle(p.Title, sub)
	}
	if v, ok := f["author"]; ok {
		used["author"] = true
		for _, a := range splitNames(v) {
			n := bibName(a)
			rec.Names = append(rec.Names, n)
			p.Authors = append(p.Authors, n.Display())
		}
	}
	year := text("year", "date")
	if p.Year = parseYear(year); p.Year == 0 {
		if msg := biblio.NotAYear(year); msg != "" {
			rec.Warnings = append(rec.Warnings, msg)
			// Kept in Extra, so an export writes it back as it was.
			delete(used, "year")
			delete(used, "date")
		}
	}
	p.Volume = text("volume")
	p.Issue = text("number", "issue")
	if v, ok := f["pages"]; ok {
		used["pages"] = true
		p.Pages = decodeText(v, true)
	}
	p.Abstract = text("abstract")
	p.DOI = verbatim("doi")
	p.URL = verbatim("url")
	p.PMID = verbatim("pmid")
	eprint := strings.TrimSpace(verbatim("eprint"))
	prefix := strings.ToLower(strings.TrimSpace(text("archiveprefix", "eprinttype")))
	arxiv := false
	switch {
	case eprint == "":
	case prefix == "arxiv" || prefix == "" && arxivIDRE.MatchString(eprint):
		arxiv = true
		p.ArxivID = eprint
	case prefix == "pubmed" && p.PMID == "":
		p.PMID = eprint
	}
	if p.ArxivID == "" {
		p.ArxivID = verbatim("arxivid")
	}
	rec.Type = kind(typ, arxiv, f)
	used["pubstate"] = true
	if p.URL == "" {
		p.URL = verbatim("bdsk-url-1") // BibDesk keeps links there
	}
	if p.DOI == "" {
		if d := research.NormalizeDOI(p.URL); d != "" && p.URL != strings.TrimSpace(d) {
			// The RIS reader does the same with UR: both formats' readers
			// must agree on a record's identifiers.
			p.DOI = strings.TrimSpace(p.URL)
		}
	}
	if p.ArxivID == "" {
		if id := arxivFromURL(p.URL); id != "" {
			p.ArxivID = id
		}
	}
	p.Venue = text("journal", "journaltitle", "booktitle")
	if full := text("fjournal"); full != "" && used["journal"] {
		// MathSciNet's full journal name beside the abbreviation: the
		// venue is the full name, and the abbreviation stays in Extra
		// so the Writer puts both back.
		p.Venue = full
		delete(used, "journal")
		delete(used, "fjournal")
	}
	if rec.Type == biblio.Book && used["booktitle"] && p.Venue != "" {
		// A book's venue is normally its publisher; one taken from
		// booktitle stays in Extra too, so the Writer puts it back there
		// rather than in a publisher field the book never had.
		delete(used, "booktitle")
	}
	if p.Venue == "" {
		switch rec.Type {
		case biblio.Book:
			p.Venue = text("publisher")
		case biblio.Thesis:
			p.Venue = text("school", "institution")
		case biblio.Report:
			p.Venue = text("institution")
		default:
			if v := strings.TrimSpace(f["howpublished"]); strings.HasPrefix(v, `\url`) || strings.HasPrefix(v, `\href`) {
				used["howpublished"] = true
				if p.URL == "" {
					p.URL = linkTarget(v)
				}
			} else {
				p.Venue = text("howpublished")
			}
		}
	}
	kwField := "keywords"
	for _, alt := range []string{"keyword", "tags"} { // Springer's, Calibre's
		if !f.has(kwField) && f.has(alt) {
			kwField = alt
		}
	}
	if v, ok := f[kwField]; ok {
		used[kwField] = true
		for _, k := range splitTop(unwrapGroup(v), func(s string, i int) int {
			if s[i] == ',' || s[i] == ';' {
				return 1
			}
			return 0
		}) {
			rec.Keywords = append(rec.Keywords, decodeText(k, false))
		}
		rec.Keywords = dedupe(rec.Keywords)
	}
	rec.Note = text("note")
	rec.Extra = extra(typ, key, f, used)
	return rec
}

// extra keeps the citation key, the entry type and every field not mapped
// onto the paper (month, publisher, issn, file, ...), decoded; the type
// field goes under "genre".
func extra(typ, key string, f fields, used map[string]bool) json.RawMessage {
	m := make(map[string]string, len(f)-len(used)+2)
	m["bibtex_type"] = typ
	if key != "" {
		m["bibtex_key"] = key
	}
	for name, v := range f {
		if !used[name] {
			m[name] = decodeText(v, false)
		}
	}
	if t, ok := m["type"]; ok && !f.has("genre") {
		// The type field ("Ph.D.", "Internet-Draft") is CSL's genre, and
		// Quarry's library keeps its own "type" (the record's) in Extra.
		delete(m, "type")
		m["genre"] = t
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// dedupe drops repeated keywords (the same up to case and blanks), which
// some exports write once per group or source.
func dedupe(kws []string) []string {
	seen := make(map[string]bool, len(kws))
	out := kws[:0]
	for _, k := range kws {
		key := strings.ToLower(strings.Join(strings.Fields(k), " "))
		if key != "" && seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, k)
	}
	return out
}

// linkTarget is the address of a \url{...} or \href{...}{...} value.
func linkTarget(v string) string {
	d := decoder{s: v}
	for d.i < len(d.s) && d.s[d.i] != '{' {
		d.i++
	}
	return strings.TrimSpace(decodeVerbatim(d.group()))
}

var arxivURLRE = regexp.MustCompile(`(?i)^https?://(www\.)?arxiv\.org/(abs|pdf)/([^?#]+?)(\.pdf)?$`)

// arxivFromURL reads the arXiv ID from an arxiv.org address, as the RIS
// reader does.
func arxivFromURL(u string) string {
	m := arxivURLRE.FindStringSubmatch(strings.TrimSpace(u))
	if m == nil || !arxivIDRE.MatchString(m[3]) {
		return ""
	}
	return m[3]
}

// bcRE finds a date before the common era: BibLaTeX's negative years
// ("-0043") or a BC/BCE suffix.
var bcRE = regexp.MustCompile(`(?i)^\s*-\s*\d|\d\s*(b\.?\s*c\.?(\s*e\.?)?|v\.?\s*chr\.?)(\W|$)`)

// parseYear takes the first number of up to four digits ("2020", "2020-05",
// "ca. 1850"); anything else, a year after 3000 and a date before the
// common era (which Quarry's years cannot hold) are an unknown year.
func parseYear(s string) int {
	if bcRE.MatchString(s) {
		return 0
	}
	start := strings.IndexAny(s, "0123456789")
	if start < 0 {
		return 0
	}
	end := start
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end-start > 4 {
		return 0
	}
	y, _ := strconv.Atoi(s[start:end])
	if y > 3000 {
		return 0
	}
	return y
}

// splitNames splits an author list on "and" between blanks at brace depth
// 0 and drops the "others" of a truncated list.
func splitNames(raw string) []string {
	var out []string
	for _, n := range splitTop(raw, andAt) {
		if n = strings.TrimSpace(n); n != "" && n != "others" {
			out = append(out, n)
		}
	}
	return out
}

// andAt returns the length of an " and " separator at s[i], or 0.
func andAt(s string, i int) int {
	if !isSpace(s[i]) {
		return 0
	}
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j+3 >= len(s) || !strings.EqualFold(s[j:j+3], "and") || !isSpace(s[j+3]) {
		return 0
	}
	j += 3
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j - i
}

// splitTop splits raw at separators found by sep outside braces; escaped
// braces do not count, as in the scanner.
func splitTop(raw string, sep func(string, int) int) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '\\':
			if i+1 < len(raw) && strings.IndexByte("{}\\", raw[i+1]) >= 0 {
				i++
			}
		case c == '{':
			depth++
		case c == '}':
			depth--
		case depth == 0:
			if n := sep(raw, i); n > 0 {
				out = append(out, raw[start:i])
				start = i + n
				i = start - 1
			}
		}
	}
	return append(out, raw[start:])
}

// joinSubtitle puts a biblatex subtitle after its title the way biblatex
// prints it (\subtitlepunct is a full stop and a space), without doubling
// the title's own closing punctuation.
func joinSubtitle(title, sub string) string {
	title = strings.TrimRight(title, " ")
	if title == "" {
		return sub
	}
	if strings.ContainsAny(title[len(title)-1:], ".?!:;") {
		return title + " " + sub
	}
	return title + ". " + sub
}
