// Command web is the Quarry binary: `quarry serve` runs the web app, and
// further subcommands (import, dedup, eval, workflow, backup, restore,
// migrate-db, version) share its
// configuration.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and returns the exit status for it: 0 for
// none, 2 for a usage error (followed by the command's usage), 1 for any
// other failure.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "quarry:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, "\n"+ue.usage)
		return 2
	}
	return 1
}

// run is the whole program behind main, with its inputs passed in so tests
// can call it: ctx is cancelled on SIGINT/SIGTERM, args are the arguments
// after the program name, getenv reads the environment, stdin is read for
// the file "-", stdout receives normal output (including logs) and stderr
// what must not mix with it (messages when stdout carries data).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	err := c.dispatch(ctx, args)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

// command is one subcommand: its name, one line for the list, and what
// runs it with the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(c *cli, ctx context.Context, args []string) error
}

// commands lists the subcommands in the order help shows them.
func commands() []command {
	return []command{
		{"serve", "run the web app (the default when no subcommand is given)", (*cli).serve},
		{"import", "import BibTeX, RIS, CSL-JSON, MEDLINE, CSV or JSON Lines files into the local library", (*cli).importCmd},
		{"dedup", "merge several exports into one deduplicated file, with a CSV report of every merge", (*cli).dedupCmd},
		{"eval", "measure the deduplicator or the relevance scorer on labelled data", (*cli).evalCmd},
		{"workflow", "check workflow definition files, draw their graphs (DOT, SVG, Mermaid), start runs at any stage", (*cli).workflowCmd},
		{"backup", "copy the database into the backup directory (safe while the server runs)", (*cli).backupCmd},
		{"restore", "replace the database with a backup, after checking it (stop the server first)", (*cli).restoreCmd},
		{"migrate-db", "copy the SQLite database into an empty PostgreSQL database and verify the copy", (*cli).migrateDBCmd},
		{"version", "print the version and the revision it was built from", (*cli).versionCmd},
		{"help", "show this help, or a subcommand's (quarry help import)", (*cli).helpCmd},
	}
}

// dispatch runs the subcommand args name; with none, or with flags first,
// it serves.
func (c *cli) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return c.serve(ctx, nil)
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return c.helpCmd(ctx, args[1:])
	case "-version", "--version":
		return c.versionCmd(ctx, args[1:])
	}
	if strings.HasPrefix(args[0], "-") {
		return c.serve(ctx, args)
	}
	i := slices.IndexFunc(commands(), func(cmd command) bool { return cmd.name == args[0] })
	if i < 0 {
		return unknownCommand(args[0])
	}
	return commands()[i].run(c, ctx, args[1:])
}

// unknownCommand is the usage error for a name that is no subcommand.
func unknownCommand(name string) error {
	var names []string
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	return &usageError{err: fault.Errorf(fault.EInvalid, "unknown subcommand %q (subcommands: %s)", name, strings.Join(names, ", ")), usage: usage()}
}

// usage is quarry's own help: the subcommands and the conventions they
// share.
func usage() string {
	var b strings.Builder
	b.WriteString("Usage: quarry <subcommand> [flags] [arguments]\n\nSubcommands:\n")
	for _, cmd := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", cmd.name, cmd.summary)
	}
	b.WriteString(`
Flags may come before or after the arguments. The file "-" is standard
input (import, dedup) or standard output (dedup --out -).
Exit status: 0 on success, 1 when the command fails, 2 when it is called
wrongly (the usage is then printed on standard error).

Run "quarry help <subcommand>" or "quarry <subcommand> -h" for its flags.
`)
	return b.String()
}

// helpCmd implements `quarry help [SUBCOMMAND]`.
func (c *cli) helpCmd(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0 || args[0] == "help":
		_, err := io.WriteString(c.stdout, usage())
		return err
	case len(args) > 1:
		return &usageError{cmd: "help", err: fault.Errorf(fault.EInvalid, "want one subcommand, got %q", args), usage: usage()}
	}
	return c.dispatch(ctx, []string{args[0], "-h"})
}

// serve implements `quarry serve`: it listens on the configured address,
// prints the real bound address (so --addr 127.0.0.1:0 is usable) and serves
// until ctx is cancelled.
func (c *cli) serve(ctx context.Context, args []string) (err error) {
	fs := newFlagSet("serve", "quarry serve [flags]",
		"Runs the web app until interrupted. Each setting comes from its flag, else its\n"+
			"environment variable, else its key in the QUARRY_CONFIG file, else its default.")
	flags := app.Flags{}
	flags.Bind(fs.FlagSet)
	fs.flags = func(w io.Writer) {
		fmt.Fprintln(w, "Settings:")
		_ = app.WriteSettings(w)
	}
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fs.misuse("unexpected arguments %q", rest)
	}
	cfg, err := app.Load(flags, c.getenv)
	if err != nil {
		return err
	}
	logger := app.NewLogger(cfg, c.stdout)
	a, err := app.New(ctx, cfg, app.WithLogger(logger), app.WithVersion(releaseVersion()), app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) {
		return app.Workflows(cfg.Search, st, logger)
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
	if _, err := fmt.Fprintf(c.stdout, "quarry: listening on http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return err
	}
	return a.Serve(ctx, ln)
}
