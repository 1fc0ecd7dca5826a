package library

import (
	"errors"
	"io"

	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// FileContents is a whole file read into memory: its readable papers and
// the records left out, with their lines and reasons.
type FileContents struct {
	Format  string
	Papers  []research.RawPaper
	Skipped []research.RecordError
}

// ReadAll reads every record of a file (any format codecs reads) for a use
// that needs them all at once, such as attaching an export to a run. More
// than limit readable records is an EInvalid error, so one upload cannot
// make every later search step of a run load an unbounded file.
func ReadAll(r io.Reader, name string, opts codecs.Options, limit int) (FileContents, error) {
	rd, err := NewReader(r, name, opts)
	if err != nil {
		return FileContents{}, err
	}
	defer rd.Close()
	out := FileContents{Format: rd.Format()}
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return FileContents{}, fault.Errorf(fault.EInvalid, "%v", err)
		}
		switch {
		case rec.Problem != "":
			out.Skipped = append(out.Skipped, research.RecordError{Origin: name, Line: rec.Line, Reason: rec.Problem})
			continue
		case rec.Skip != "":
			out.Skipped = append(out.Skipped, research.RecordError{Origin: name, Line: rec.Line, Reason: rec.Skip})
			continue
		}
		if len(out.Papers) == limit {
			return FileContents{}, fault.Errorf(fault.EInvalid, "%s has more than %d records; import it into the library instead and search it there", name, limit)
		}
		out.Papers = append(out.Papers, rec.Paper)
	}
}
