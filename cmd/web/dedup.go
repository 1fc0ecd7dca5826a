package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/biblio/csvfile"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
)

// dedupCmd implements `quarry dedup FILE… --out merged.ris`: it reads
// several exports (any format, mixed; "-" is standard input), runs the
// pipeline's deduplicator over all their records, writes one record per
// distinct paper, and writes a CSV report of every merge and every
// "related, kept apart" decision with its reason and evidence, so a
// systematic reviewer can check each one. --out - writes the records to
// standard output, and the messages then go to standard error.
func (c *cli) dedupCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("dedup", "quarry dedup [--format F] --out merged.ris [--out-format F] [--report merges.csv] FILE...",
		"Merges several exports into one deduplicated file and reports every merge.\n"+
			"The file - is standard input; --out - writes to standard output (with --out-format).")
	out := fs.String("out", "", "merged output file (required; - for standard output); its extension picks the format unless --out-format is given")
	outFormat := fs.String("out-format", "", "output format: "+strings.Join(biblio.Formats, ", "))
	inFormat := fs.String("format", "", "input format for every FILE (default: detect each from its content)")
	report := fs.String("report", "", "CSV report of merges (default: the output name with .merges.csv; none with --out -)")
	files, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fs.misuse("no input files")
	}
	if *out == "" {
		return fs.misuse("--out is required (e.g. --out merged.ris)")
	}
	for _, f := range []string{*outFormat, *inFormat} {
		if f != "" && !slices.Contains(biblio.Formats, f) {
			return fs.misused(codecs.UnknownFormat(f))
		}
	}
	format := *outFormat
	switch {
	case format != "":
	case *out == "-":
		return fs.misuse("--out - writes to standard output, which has no name to tell the format from; pass --out-format (one of %s)", strings.Join(biblio.Formats, ", "))
	default:
		if format = codecs.FormatForPath(*out); format == "" {
			return fs.misuse("cannot tell the output format from %q; pass --out-format (one of %s)", *out, strings.Join(biblio.Formats, ", "))
		}
	}
	if *report == "" && *out != "-" {
		*report = strings.TrimSuffix(*out, filepath.Ext(*out)) + ".merges.csv"
	}
	if *out == "-" && *report == "-" {
		return fs.misuse("--out and --report cannot both be standard output (-)")
	}
	if err := stdinOnce(fs, files); err != nil {
		return err
	}
	msgs := c.stdout // what people read; standard error when stdout carries data
	if *out == "-" || *report == "-" {
		msgs = c.stderr
	}

	var recs []fileRecord
	problems := 0
	for _, path := range files {
		got, bad, err := readFileRecords(path, codecs.Options{Format: *inFormat}, c.stdin, msgs)
		if err != nil {
			return err
		}
		recs = append(recs, got...)
		problems += bad
	}
	papers := make([]research.RawPaper, len(recs))
	for i := range recs {
		papers[i] = recs[i].rec.Paper
	}
	analysis, err := dedup.Analyze(ctx, papers)
	if err != nil {
		return err
	}
	merged, _ := dedup.Merge(papers, analysis)
	records := make([]biblio.Record, len(merged))
	for i, members := range analysis.Clusters {
		records[i] = mergeRecords(recs, members, merged[i])
	}
	if err := c.writeOutput(*out, func(w io.Writer) error { return codecs.WriteAll(w, format, records) }); err != nil {
		return err
	}
	reportTo := "none (--report FILE writes one)"
	if *report != "" {
		if err := c.writeOutput(*report, func(w io.Writer) error { return writeMergeReport(w, recs, analysis) }); err != nil {
			return err
		}
		reportTo = outputName(*report)
	}
	fmt.Fprintf(msgs, "read %d records from %d files (%d unreadable, skipped); wrote %d to %s; %d merged, %d related pairs kept apart; report: %s\n",
		len(recs), len(files), problems, len(records), outputName(*out), len(recs)-len(records), len(analysis.Related), reportTo)
	return nil
}

// outputName is how messages name an output: its path, or standard output
// for "-".
func outputName(path string) string {
	if path == "-" {
		return "standard output"
	}
	return path
}

// writeOutput writes to path atomically, or to stdout for "-".
func (c *cli) writeOutput(path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(c.stdout)
	}
	return writeFileAtomically(path, write)
}

// fileRecord is a readable record and where it came from.
type fileRecord struct {
	file string
	rec  biblio.Record
}

// readFileRecords reads every readable record of path ("-": stdin, named
// "stdin"), tagging each with the file name as its source; unreadable
// records are listed on msgs and counted, not fatal.
func readFileRecords(path string, opts codecs.Options, stdin io.Reader, msgs io.Writer) ([]fileRecord, int, error) {
	r, name := stdin, "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, fault.Errorf(fault.EInvalid, "open %s: %v", path, err)
		}
		defer f.Close()
		r, name = f, filepath.Base(path)
	}
	in, err := codecs.NewReader(r, name, opts)
	if err != nil {
		return nil, 0, err
	}
	defer in.Close()
	var out []fileRecord
	bad := 0
	for {
		r, err := in.Next()
		if errors.Is(err, io.EOF) {
			return out, bad, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		if r.Problem != "" {
			bad++
			if bad <= maxListedErrors {
				fmt.Fprintf(msgs, "  %s:%d: %s (skipped)\n", name, r.Line, r.Problem)
			}
			continue
		}
		if r.Skip != "" {
			continue
		}
		r.Paper.Source = name
		out = append(out, fileRecord{file: name, rec: r})
	}
}

// mergeRecords is one output record for a cluster: the deduplicator's
// merged paper plus what only files carry — the first type given, every
// keyword, the notes of all members, and a mark if the members agree.
func mergeRecords(recs []fileRecord, members []int, paper research.RawPaper) biblio.Record {
	out := biblio.Record{Paper: paper}
	var notes []string
	marks := map[string]bool{}
	for _, i := range members {
		r := recs[i].rec
		if out.Type == "" {
			out.Type = r.Type
		}
		for _, k := range r.Keywords {
			if !slices.Contains(out.Keywords, k) {
				out.Keywords = append(out.Keywords, k)
			}
		}
		if r.Note != "" && !slices.Contains(notes, r.Note) {
			notes = append(notes, r.Note)
		}
		if r.Mark != "" {
			marks[r.Mark] = true
		}
	}
	out.Note = strings.Join(notes, "\n")
	if len(marks) == 1 {
		for m := range marks {
			out.Mark = m
		}
	}
	return out
}

// writeMergeReport writes one CSV row per decision that joined two records
// (merged) or deliberately kept two apart (related), with both records'
// identifying fields side by side.
func writeMergeReport(w io.Writer, recs []fileRecord, a dedup.Analysis) error {
	cw := csvfile.NewSheetWriter(w)
	header := []string{"decision", "reason", "score", "detail"}
	for _, side := range []string{"a", "b"} {
		for _, col := range []string{"file", "line", "title", "year", "first_author", "doi", "pmid"} {
			header = append(header, col+"_"+side)
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := func(decision string, l dedup.Link) error {
		out := []string{decision, string(l.Reason), strconv.FormatFloat(l.Score, 'f', 3, 64), l.Detail}
		for _, i := range []int{l.A, l.B} {
			r := recs[i]
			first := ""
			if len(r.rec.Paper.Authors) > 0 {
				first = r.rec.Paper.Authors[0]
			}
			year := ""
			if r.rec.Paper.Year != 0 {
				year = strconv.Itoa(r.rec.Paper.Year)
			}
			out = append(out, r.file, strconv.Itoa(r.rec.Line), r.rec.Paper.Title, year, first, r.rec.Paper.DOI, r.rec.Paper.PMID)
		}
		return cw.Write(out)
	}
	for _, l := range a.Merges {
		if err := row("merged", l); err != nil {
			return err
		}
	}
	for _, l := range a.Related {
		if err := row("related", l); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeFileAtomically writes path through a temporary file in the same
// directory and renames it into place, so an interrupted run never leaves a
// half-written export where a reviewer expects a complete one.
func writeFileAtomically(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fault.Errorf(fault.EInvalid, "create %s: %v", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
