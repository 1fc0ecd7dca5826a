// Package demo embeds a small library of real, well-known papers so that a
// fresh installation with no network access still finds something: the local
// source searches it, and the library importer seeds an empty database from
// it. The records live in demo.jsonl (one JSON object per line) so they can be
// reviewed and extended without touching Go code.
package demo

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// Source is the source name every demo paper carries, because the local
// source is the one that serves them.
const Source = "local"

//go:embed demo.jsonl
var data []byte

// Entry is one line of demo.jsonl as written. It keeps FieldsOfStudy, which
// research.RawPaper has no place for, so callers that group or filter by field
// can still use it.
type Entry struct {
	Title   string   `json:"title"`
	Authors []string `json:"authors"`
	// AuthorsTruncated says Authors names only the first authors of a
	// paper with a long byline (a trial with dozens of investigators).
	// The list never ends in "et al.": that is not a person, and exported
	// as one it would read "… and et al." in BibTeX and give the
	// deduplicator the surname "al". research.RawPaper has no field for a
	// truncated list, so a paper carries the first authors only.
	AuthorsTruncated bool     `json:"authors_truncated,omitempty"`
	Year             int      `json:"year"`
	Venue            string   `json:"venue"`
	DOI              string   `json:"doi,omitempty"`
	ArxivID          string   `json:"arxiv_id,omitempty"`
	PMID             string   `json:"pmid,omitempty"`
	URL              string   `json:"url,omitempty"`
	FieldsOfStudy    []string `json:"fields_of_study"`
	// Summary is a short description written for this library (not the
	// paper's abstract, which is copyrighted); it is what the local source
	// searches.
	Summary string `json:"summary"`
}

// Paper maps the entry to the record the pipeline works with. The summary
// becomes the abstract because that is the text local search and relevance
// scoring read.
func (e Entry) Paper() research.RawPaper {
	p := research.RawPaper{
		Title:    e.Title,
		Authors:  append([]string(nil), e.Authors...),
		Year:     e.Year,
		Venue:    e.Venue,
		Abstract: e.Summary,
		DOI:      e.DOI,
		ArxivID:  e.ArxivID,
		PMID:     e.PMID,
		URL:      e.URL,
		Source:   Source,
	}
	p.ID = research.StableID(p)
	return p
}

// Entries parses the embedded library. Each call parses afresh and returns
// new slices, so callers may modify the result without affecting others.
func Entries() ([]Entry, error) {
	return parse(data)
}

// Papers returns the embedded library as source records with stable IDs,
// ready to be stored or searched.
func Papers() ([]research.RawPaper, error) {
	entries, err := Entries()
	if err != nil {
		return nil, err
	}
	papers := make([]research.RawPaper, len(entries))
	for i, e := range entries {
		papers[i] = e.Paper()
	}
	return papers, nil
}

// parse reads JSONL, skipping blank lines and rejecting unknown fields so a
// typo in a key is caught instead of silently dropping data.
func parse(b []byte) ([]Entry, error) {
	var entries []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		var e Entry
		if err := dec.Decode(&e); err != nil {
			return nil, fault.Errorf(fault.EInternal, "demo library line %d: %v", line, err)
		}
		if dec.More() {
			return nil, fault.Errorf(fault.EInternal, "demo library line %d: trailing data after object", line)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, &fault.Error{Code: fault.EInternal, Message: "demo library: read", Err: err}
	}
	return entries, nil
}
