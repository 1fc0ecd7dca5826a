package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"quarry/internal/fault"
)

// cli is what one invocation of quarry works with: the environment and the
// standard streams. main passes the process's; tests pass a map and
// buffers.
type cli struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// usageError is a mistake in how a command was called (an unknown command
// or flag, a missing argument): main prints it with the command's usage and
// exits with status 2, apart from failures (status 1). It wraps a
// fault.EInvalid error, so fault.ErrorCode says invalid.
type usageError struct {
	cmd   string // "import"; "" for quarry itself
	err   error
	usage string
}

func (e *usageError) Error() string {
	if e.cmd == "" {
		return fault.ErrorMessage(e.err)
	}
	return e.cmd + ": " + fault.ErrorMessage(e.err)
}

func (e *usageError) Unwrap() error { return e.err }

// errHelpShown ends a command that was asked for its help (-h) and has
// printed it; run turns it into success.
var errHelpShown = errors.New("help shown")

// flagSet is a command's flags and the usage shown for -h and with a
// usage error: the synopsis, what the command does, then its flags.
type flagSet struct {
	*flag.FlagSet
	synopsis string // "quarry import [flags] FILE..."
	about    string
	// flags writes the flags' part of the usage; nil means the flag
	// package's list (serve lists its settings instead).
	flags func(w io.Writer)
}

func newFlagSet(name, synopsis, about string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors and prints help itself
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis, about: about}
}

// usage is the text -h prints and a usage error carries.
func (fs *flagSet) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", fs.synopsis, fs.about)
	switch {
	case fs.flags != nil:
		b.WriteString("\n")
		fs.flags(&b)
	case hasFlags(fs.FlagSet):
		b.WriteString("\nFlags (before or after the arguments):\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return b.String()
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// misuse is a usage error of this command.
func (fs *flagSet) misuse(format string, args ...any) error {
	return fs.misused(fault.Errorf(fault.EInvalid, format, args...))
}

// misused makes err (a fault.EInvalid error) a usage error of this command.
func (fs *flagSet) misused(err error) error {
	return &usageError{cmd: fs.Name(), err: err, usage: fs.usage()}
}

// parse parses args with flags before, between or after the arguments, as
// GNU tools do (`quarry dedup a.ris b.bib --out merged.ris`); "--" ends
// the flags, and "-" is an argument (standard input or output). It returns
// the arguments. Asked for help, it prints the usage on stdout and returns
// errHelpShown.
func (c *cli) parse(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if _, err := io.WriteString(c.stdout, fs.usage()); err != nil {
					return nil, err
				}
				return nil, errHelpShown
			}
			return nil, fs.misuse("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// stdinOnce refuses arguments that name standard input ("-") more than
// once: it can be read only once.
func stdinOnce(fs *flagSet, files []string) error {
	n := 0
	for _, f := range files {
		if f == "-" {
			n++
		}
	}
	if n > 1 {
		return fs.misuse("standard input (-) can be read only once")
	}
	return nil
}
