package main

import (
	"context"

	"quarry/internal/eval"
)

const evalAbout = `Measures the product's deduplicator, relevance scorer or search on labelled data.

  dedup DIR       run the deduplicator on every *.records.csv.gz in DIR
                  (labelled dup_group sets) and print pairwise precision,
                  recall and F1 per dataset, then "dedup: precision=… recall=… f1=…";
                  with --loso, choose each threshold leave-one-set-out and print
                  the held-out figures, then "dedup loso: precision=… recall=…"
  screening DIR   simulate a researcher screening every review in DIR
                  (reviews.json + CSVs) with the app's relevance scorer, its
                  tuned constants chosen leave-one-review-out, and with the
                  TF-IDF baselines; print WSS@95 and RRF@10 per review and
                  fold, then "screening loso: wss95=… rrf10=…" and
                  "screening baseline: wss95=… rrf10=…" (see docs/screening.md)
  search DIR      load every record of every review in DIR into a temporary
                  library, run each review's first search iteration offline
                  with its question and print the recall of its included
                  records at 25, 100, 500 and 1000 beside an Okapi BM25
                  baseline, then "search: recall@100=… recall@500=…
                  bm25_recall@100=… bm25_recall@500=…"; with --loso, choose
                  the library's ranking constants leave-one-review-out over a
                  grid (minutes) and print each fold's choice and held-out
                  recall, then "search loso: recall@100=… recall@500=…
                  bm25_recall@100=… bm25_recall@500=…" (see docs/search.md);
                  with --store URL the library is an empty PostgreSQL
                  database, and --library-ranking postgres ranks it there`

// evalCmd implements `quarry eval`: the quality harness that measures the
// product's deduplicator, relevance scorer and search on labelled data sets.
func (c *cli) evalCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("eval", "quarry eval [--loso] <dedup|screening|search> DIR", evalAbout)
	storeDSN := fs.String("store", "", "search: keep the temporary library in this empty PostgreSQL database (postgres://…) instead of a SQLite file")
	ranking := fs.String("library-ranking", "", "search: the library's ranking, memory (default) or postgres (text_search, needs --store)")
	loso := fs.Bool("loso", false, "dedup: choose the thresholds leave-one-set-out; search: choose the ranking constants leave-one-review-out; report the held-out sets")
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return fs.misuse("want a kind (dedup, screening or search) and a directory")
	}
	kind, dir := rest[0], rest[1]
	switch kind {
	case "dedup":
		if *loso {
			_, err := eval.DedupLOSO(ctx, dir, c.stdout)
			return err
		}
		_, err := eval.Dedup(ctx, dir, c.stdout)
		return err
	case "screening":
		_, err := eval.ScreeningLOSO(ctx, dir, c.stdout)
		return err
	case "search":
		if *loso {
			_, err := eval.SearchLOSO(ctx, dir, c.stdout)
			return err
		}
		_, err := eval.SearchOn(ctx, dir, c.stdout, eval.SearchLibrary{DSN: *storeDSN, Ranking: *ranking})
		return err
	default:
		return fs.misuse("unknown kind %q (dedup, screening or search)", kind)
	}
}
