package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"quarry/internal/app"
	"quarry/internal/engine/def"
	"quarry/internal/fault"
	"quarry/internal/report/wfgraph"
	"quarry/internal/skills/pipeline"
)

const workflowAbout = `Checks and draws workflow definition files (the format: docs/workflows.md),
and starts runs on a running server.

  validate FILE...   check every file; print "ok: FILE" for each good one and
                     each problem of a bad one as file:line:col: message;
                     exit status 1 when any file has a problem
  graph FILE         print the file's graph on standard output, as DOT (the
                     default), SVG laid out by Graphviz, or Mermaid
  start NAME         start a run of workflow NAME on the server, at its first
                     stage or, with --from STAGE and the values the stages
                     from there need, at that stage (quarry workflow start -h)
  trigger-token WORKFLOW NAME [--rotate]
                     print (or replace) the token of a webhook trigger

The file "-" is standard input. The skills, forms and webhook hosts a
file may name are the ones this binary knows (the search workflow's
too: internal/skills/pipeline/search.yaml).`

// workflowCmd implements `quarry workflow validate|graph`.
func (c *cli) workflowCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("workflow", "quarry workflow <validate|graph|start|trigger-token> [flags] FILE...|NAME", workflowAbout)
	if len(args) == 0 {
		return fs.misuse("want validate, graph, start or trigger-token")
	}
	switch args[0] {
	case "validate":
		return c.workflowValidate(args[1:])
	case "graph":
		return c.workflowGraph(ctx, args[1:])
	case "start":
		return c.workflowStart(ctx, args[1:])
	case "trigger-token":
		return c.workflowTriggerToken(ctx, args[1:])
	case "-h", "-help", "--help":
		if _, err := io.WriteString(c.stdout, fs.usage()); err != nil {
			return err
		}
		return errHelpShown
	}
	return fs.misuse("unknown workflow command %q (validate, graph, start or trigger-token)", args[0])
}

// workflowValidate implements `quarry workflow validate FILE...`: every
// file is checked, so one run lists every problem of every file.
func (c *cli) workflowValidate(args []string) error {
	fs := newFlagSet("workflow validate", "quarry workflow validate FILE...", workflowAbout)
	files, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fs.misuse("no files to validate")
	}
	if err := stdinOnce(fs, files); err != nil {
		return err
	}
	opts, err := c.definitionOptions()
	if err != nil {
		return err
	}
	bad, problems := 0, 0
	for _, f := range files {
		_, errs := c.loadDefinition(f, opts)
		if len(errs) == 0 {
			if f == "-" {
				f = "stdin"
			}
			if _, err := fmt.Fprintf(c.stdout, "ok: %s\n", f); err != nil {
				return err
			}
			continue
		}
		bad++
		problems += len(errs)
		if err := printProblems(c.stdout, errs); err != nil {
			return err
		}
	}
	if bad > 0 {
		return fmt.Errorf("workflow validate: %d problem(s) in %d of %d file(s)", problems, bad, len(files))
	}
	return nil
}

// The formats of `quarry workflow graph`.
var graphFormats = []string{"dot", "svg", "mermaid"}

// workflowGraph implements `quarry workflow graph FILE --format F`. The
// graph goes to standard output and a file's problems to standard error,
// so a bad file never yields half a drawing.
func (c *cli) workflowGraph(ctx context.Context, args []string) error {
	fs := newFlagSet("workflow graph", "quarry workflow graph FILE [--format dot|svg|mermaid]", workflowAbout)
	format := fs.String("format", "dot", "the output: "+strings.Join(graphFormats, ", "))
	files, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fs.misuse("want one file, got %d", len(files))
	}
	switch *format {
	case "dot", "svg", "mermaid":
	default:
		return fs.misuse("unknown format %q (%s)", *format, strings.Join(graphFormats, ", "))
	}
	opts, err := c.definitionOptions()
	if err != nil {
		return err
	}
	d, errs := c.loadDefinition(files[0], opts)
	if len(errs) > 0 {
		if err := printProblems(c.stderr, errs); err != nil {
			return err
		}
		return fmt.Errorf("workflow graph: %s has %d problem(s)", files[0], len(errs))
	}
	g := wfgraph.FromDefinition(d)
	var out string
	switch *format {
	case "dot":
		out = wfgraph.DOT(g, wfgraph.Options{})
	case "mermaid":
		out = wfgraph.Mermaid(g, wfgraph.Options{})
	case "svg":
		if out, err = wfgraph.Layout(ctx, wfgraph.DOT(g, wfgraph.Options{})); err != nil {
			return err
		}
	}
	_, err = io.WriteString(c.stdout, out)
	return err
}

// loadDefinition reads and checks one file ("-": standard input, named
// stdin) with what this binary knows (app.DefinitionOptions, as the
// /workflows page does); it returns the definition or every problem,
// each placed at file:line:col (a file that cannot be read at 1:1).
func (c *cli) loadDefinition(file string, opts def.Options) (*def.Definition, def.Errors) {
	name := file
	var src []byte
	var err error
	if file == "-" {
		name = "stdin"
		src, err = io.ReadAll(io.LimitReader(c.stdin, def.MaxFileSize+1))
	} else {
		src, err = os.ReadFile(file)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, def.Errors{{File: name, Line: 1, Col: 1, Msg: "cannot read the file: " + err.Error()}}
	}
	d, err := def.Load(name, src, opts)
	if err == nil {
		return d, nil
	}
	var errs def.Errors
	if errors.As(err, &errs) {
		return nil, errs
	}
	return nil, def.Errors{{File: name, Line: 1, Col: 1, Msg: fault.ErrorMessage(err)}}
}

// definitionOptions is app.DefinitionOptions of the settings a definition
// is checked against (QUARRY_WEBHOOK_HOSTS, from the environment or the
// configuration file), so the CLI judges a file as the server would, plus
// the search workflow's native steps and forms, so its own file
// (internal/skills/pipeline/search.yaml) checks and draws too.
func (c *cli) definitionOptions() (def.Options, error) {
	cfg, err := app.Load(app.Flags{}, c.getenv, "QUARRY_WEBHOOK_HOSTS")
	if err != nil {
		return def.Options{}, err
	}
	return pipeline.DefOptions(app.DefinitionOptions(cfg)), nil
}

// printProblems writes one problem a line, file:line:col: message.
func printProblems(w io.Writer, errs def.Errors) error {
	for _, e := range errs {
		if _, err := fmt.Fprintln(w, e.Error()); err != nil {
			return err
		}
	}
	return nil
}
