package biblio

import "fmt"

// Limits bound what one reader holds in memory, so a hostile or broken file
// (one line of a gigabyte, an unclosed quote, a field that never ends)
// costs at most a few MiB and is reported as a Problem record with its
// line instead of growing the process until it dies. Every reader of the
// format packages takes them (WithLimits); the zero value of a field means
// its default.
type Limits struct {
	// MaxLine bounds one physical line (RIS, MEDLINE, CSV, JSON Lines)
	// and one field value (BibTeX, CSL-JSON strings). The rest of a
	// longer line is read and discarded, never buffered.
	MaxLine int
	// MaxRecord bounds one record: all its lines or bytes together.
	MaxRecord int
}

// Default limits: far above any real record (a long abstract is ~10 KiB,
// a PubMed record with 5,000 authors under 1 MiB), far below what would
// hurt a small server.
const (
	DefaultMaxLine   = 1 << 20
	DefaultMaxRecord = 4 << 20
)

// OrDefault fills the zero fields of l with the defaults.
func (l Limits) OrDefault() Limits {
	if l.MaxLine <= 0 {
		l.MaxLine = DefaultMaxLine
	}
	if l.MaxRecord <= 0 {
		l.MaxRecord = DefaultMaxRecord
	}
	return l
}

// LineTooLong is the Problem of a record holding a line over the limit.
// Like every Problem it names no line (the record's Line does), so an
// import's summary counts these together.
func LineTooLong(max int) string {
	return fmt.Sprintf("a line longer than %s (the line limit); skipped", Size(int64(max)))
}

// RecordTooLong is the Problem of a record over the record limit.
func RecordTooLong(max int) string {
	return fmt.Sprintf("record longer than %s (the record limit); skipped", Size(int64(max)))
}

// Size writes a byte count for people: "1 MiB", "64 MiB", "1500 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
