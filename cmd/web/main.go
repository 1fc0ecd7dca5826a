// Command web is the Quarry binary: `quarry serve` runs the web app, and
// further subcommands (import, eval, dedup, ...) share its configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quarry:", err)
		os.Exit(1)
	}
}

// usage lists the subcommands; keep it in step with the switch in run.
const usage = `Usage: quarry <subcommand> [flags]

Subcommands:
  serve   run the web app (default when no subcommand is given)
  import  import BibTeX, RIS, CSL-JSON, MEDLINE, CSV or JSON Lines files into the local library
  dedup   merge several exports into one deduplicated file, with a CSV report of every merge
  eval    measure the deduplicator or the relevance scorer on labelled data
  help    show this help

Run "quarry <subcommand> -h" for the flags of a subcommand.
`

// run is the whole program behind main, with its inputs passed in so tests
// can call it: ctx is cancelled on SIGINT/SIGTERM, args are the arguments
// after the program name, getenv reads the environment and stdout receives
// normal output (including logs).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	name, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	switch name {
	case "serve":
		return serve(ctx, rest, getenv, stdout)
	case "import":
		return importCmd(ctx, rest, getenv, stdout)
	case "dedup":
		return dedupCmd(ctx, rest, stdout)
	case "eval":
		return evalCmd(ctx, rest, stdout)
	case "help":
		_, err := io.WriteString(stdout, usage)
		return err
	default:
		return fault.Errorf(fault.EInvalid, "unknown subcommand %q (subcommands: serve, import, eval, help)", name)
	}
}

// workflows is the registry of what the server can run: the search pipeline
// over the configured sources, the local library searching the store. With
// no searchable source the server still starts, without search.
func workflows(pcfg pipeline.Config, st *store.Store, logger *slog.Logger) (*engine.Registry, error) {
	lib, err := local.New(st)
	if err != nil {
		return nil, err
	}
	pcfg.Local = lib
	pcfg.Files = st
	var wfs []*engine.Workflow
	switch search, err := pipeline.FromConfig(pcfg, nil, 0); {
	case err == nil:
		wfs = append(wfs, search.Workflow())
	case errors.Is(err, pipeline.ErrNoSources):
		logger.Warn("search is disabled: no source can be searched; set QUARRY_SOURCES", "err", err)
	default:
		return nil, err
	}
	return engine.NewRegistry(wfs...)
}

// serve implements `quarry serve`: it listens on the configured address,
// prints the real bound address (so --addr 127.0.0.1:0 is usable) and serves
// until ctx is cancelled.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (err error) {
	cfg := app.ConfigFromEnv(getenv)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stdout)
	cfg.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fault.Errorf(fault.EInvalid, "serve: %v", err)
	}
	if fs.NArg() > 0 {
		return fault.Errorf(fault.EInvalid, "serve: unexpected arguments %q", fs.Args())
	}

	logger := slog.New(slog.NewTextHandler(stdout, nil))
	pcfg, err := pipeline.ConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, app.WithLogger(logger), app.WithVersion(version), app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return workflows(pcfg, st, logger)
	}))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.Close()) }()

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "quarry: listening on http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return err
	}
	return a.Serve(ctx, ln)
}
