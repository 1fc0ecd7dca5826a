// Command chaos is `make chaos`: it runs the real quarry binary against
// fake literature sources on loopback, kills it with SIGKILL at random
// moments (mid-search, at a checkpoint, just after a decision was
// accepted), restarts it on the same database, and checks that every run
// still finishes with no accepted decision lost and no step committed
// twice. The engine's own tests simulate crashes inside one process; only
// killing the real binary shows what SQLite, River and the engine do
// together when the process vanishes mid-write. A last trial fills the
// disk under the database (a small tmpfs, when the machine allows one)
// and checks the server refuses work with 507, stays up, and resumes once
// space is back.
//
// It prints one progress line per trial on standard error and, on
// standard output, the disk-full result and one summary line:
//
//	chaos: trials=30 recovered=30 lost_decisions=0 duplicated_steps=0 stuck=0
//
// The exit status is 1 when any check failed or time ran out.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	bin          string
	trials       int
	runs         int
	seed         uint64
	timeout      time.Duration
	trialTimeout time.Duration
	diskFull     bool
	keep         bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "bin/quarry", "the quarry binary to run (build it with make build)")
	flag.IntVar(&cfg.trials, "trials", 30, "how many kill-and-restart trials to run")
	flag.IntVar(&cfg.runs, "runs", 3, "runs started and driven to completion in each trial")
	flag.Uint64Var(&cfg.seed, "seed", 0, "seed of the kill plans and decisions (0: from the clock; printed, so a failure can be replayed)")
	flag.DurationVar(&cfg.timeout, "timeout", 8*time.Minute, "the most the whole program may take; trials not started by then are not run and count as a failure")
	flag.DurationVar(&cfg.trialTimeout, "trial-timeout", 60*time.Second, "how long one trial's runs may take to complete, restarts included, before the unfinished ones count as stuck")
	flag.BoolVar(&cfg.diskFull, "disk-full", true, "also run the disk-full trial (needs root and a tmpfs mount; skipped with a message otherwise)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep every trial's directory (database and server log), not only failed ones")
	flag.Parse()
	if flag.NArg() > 0 || cfg.trials < 0 || cfg.runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ok := run(ctx, cfg, os.Stdout, os.Stderr)
	stop()
	if !ok {
		os.Exit(1)
	}
}

// totals are the counts of the summary line.
type totals struct {
	trials, recovered, lost, duplicated, stuck int
}

// run does every trial and reports; it returns whether all checks passed.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) bool {
	bin, err := filepath.Abs(cfg.bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "chaos: the quarry binary: %v (build it with make build)\n", err)
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	root, err := os.MkdirTemp("", "quarry-chaos-")
	if err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return false
	}
	fmt.Fprintf(stderr, "chaos: seed=%d trials=%d runs=%d dir=%s\n", cfg.seed, cfg.trials, cfg.runs, root)
	fk := startFakes()
	defer fk.close()
	rng := rand.New(rand.NewPCG(cfg.seed, cfg.seed>>1|1))

	var t totals
	ok := true
	start := time.Now()
	for i := 1; i <= cfg.trials; i++ {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "chaos: stopped before trial %d of %d: %v\n", i, cfg.trials, context.Cause(ctx))
			ok = false
			break
		}
		tr := newTrial(i, cfg, bin, filepath.Join(root, fmt.Sprintf("trial-%02d", i)), fk, rng)
		res := tr.run(ctx)
		t.trials++
		t.lost += res.lost
		t.duplicated += res.duplicated
		t.stuck += res.stuck
		if res.ok() {
			t.recovered++
			fmt.Fprintf(stderr, "chaos: trial %d/%d ok: %s\n", i, cfg.trials, res.summary())
			if !cfg.keep {
				os.RemoveAll(tr.dir)
			}
			continue
		}
		ok = false
		fmt.Fprintf(stderr, "chaos: trial %d/%d FAILED: %s\n", i, cfg.trials, res.summary())
		for _, p := range res.problems {
			fmt.Fprintf(stderr, "chaos:   %s\n", p)
		}
		fmt.Fprintf(stderr, "chaos:   kept %s; last lines of its server log:\n%s", tr.dir, tr.srv.tail(40))
	}
	fmt.Fprintf(stderr, "chaos: %d trials in %s\n", t.trials, time.Since(start).Round(time.Millisecond))

	if cfg.diskFull {
		line, passed := diskFullTrial(ctx, cfg, bin, filepath.Join(root, "disk-full"), fk, stderr)
		fmt.Fprintln(stdout, line)
		ok = ok && passed
	}
	if ok && !cfg.keep {
		os.RemoveAll(root)
	}
	fmt.Fprintf(stdout, "chaos: trials=%d recovered=%d lost_decisions=%d duplicated_steps=%d stuck=%d\n",
		t.trials, t.recovered, t.lost, t.duplicated, t.stuck)
	return ok && t.trials == cfg.trials && t.recovered == t.trials
}
