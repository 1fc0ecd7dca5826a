package main

import (
	"context"
	"flag"
	"io"

	"quarry/internal/eval"
	"quarry/internal/fault"
)

const evalUsage = `Usage: quarry eval <dedup|screening> DIR

  dedup DIR       run the deduplicator on every *.records.csv.gz in DIR
                  (labelled dup_group sets) and print pairwise precision,
                  recall and F1 per dataset, then "dedup: precision=… recall=… f1=…"
  screening DIR   simulate a researcher screening every review in DIR
                  (reviews.json + CSVs) with the app's relevance scorer and
                  print WSS@95 and RRF@10 per review, then the means
                  (wss95 is Cohen et al.'s definition; wss95_insights is
                  asreview-insights', see docs/screening.md)
`

// evalCmd implements `quarry eval`: the quality harness that measures the
// product's deduplicator and relevance scorer on labelled data sets.
func evalCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() { _, _ = io.WriteString(stdout, evalUsage) }
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return fault.Errorf(fault.EInvalid, "eval: want a kind (dedup or screening) and a directory")
	}
	kind, dir := fs.Arg(0), fs.Arg(1)
	switch kind {
	case "dedup":
		_, err := eval.Dedup(ctx, dir, stdout)
		return err
	case "screening":
		_, err := eval.Screening(ctx, dir, stdout)
		return err
	default:
		return fault.Errorf(fault.EInvalid, "eval: unknown kind %q (dedup or screening)", kind)
	}
}

// flagErr turns -h into a clean exit and any other flag problem into an
// invalid-input error.
func flagErr(err error) error {
	if err == flag.ErrHelp {
		return nil
	}
	return fault.Errorf(fault.EInvalid, "%v", err)
}
