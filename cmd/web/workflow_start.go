package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"quarry/internal/app"
	"quarry/internal/fault"
)

// kvFlag collects repeated key=value flags; a value that is JSON (a
// number, true, an object) is taken as such, any other as a string.
type kvFlag map[string]any

func (f kvFlag) String() string { return "" }

func (f kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		x = v
	}
	f[strings.TrimSpace(k)] = x
	return nil
}

const workflowStartAbout = `Starts a run of workflow NAME on a running server (POST
/api/workflows/NAME/runs) and prints its address. With --from the run starts
at that stage, given the context keys and stage outputs the stages from there
read: the server names each one missing (exit status 1) and refuses a
workflow that can start only at its first stage (the search).

Values of --param, --context and --output are JSON when they parse as JSON
(21, true, ["a","b"]), else text. --output takes stage.name=value.
--context-file is a JSON object of context keys; --outputs-file a JSON object
of stage -> {name: value}; flags win over the files' keys.

The server is --server, else QUARRY_PUBLIC_URL, else http://QUARRY_ADDR.
On a server with accounts, QUARRY_API_TOKEN holds your API token (from your
account page): the run is started as you.`

// workflowStart implements `quarry workflow start NAME`.
func (c *cli) workflowStart(ctx context.Context, args []string) error {
	fs := newFlagSet("workflow start", "quarry workflow start NAME [--from STAGE] [--param k=v]... [--context k=v]... [--context-file F] [--output stage.name=v]... [--outputs-file F] [--by NAME] [--server URL]", workflowStartAbout)
	params, cx, outs := kvFlag{}, kvFlag{}, kvFlag{}
	fs.Var(params, "param", "a run parameter, `key=value` (repeatable)")
	fs.Var(cx, "context", "a context value, `key=value` (repeatable)")
	fs.Var(outs, "output", "a stage's output, `stage.name=value` (repeatable)")
	from := fs.String("from", "", "the `stage` to start at (default: the first)")
	cxFile := fs.String("context-file", "", "a JSON `file` of context keys and values")
	outFile := fs.String("outputs-file", "", "a JSON `file` of stage → {name: value}")
	by := fs.String("by", "", "who starts the run (default: cli)")
	server := fs.String("server", "", "the server's `URL`")
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fs.misuse("want one workflow name, got %d", len(rest))
	}
	token := strings.TrimSpace(c.getenv("QUARRY_API_TOKEN"))
	body := map[string]any{"params": map[string]any(params)}
	switch {
	case *by != "":
		body["started_by"] = *by
	case token == "": // open mode: say who; with a token the server knows
		body["started_by"] = "cli"
	}
	cxs := map[string]any{}
	if *cxFile != "" {
		if err := readJSONFile(*cxFile, &cxs); err != nil {
			return err
		}
	}
	for k, v := range cx {
		cxs[k] = v
	}
	outputs := map[string]map[string]any{}
	if *outFile != "" {
		if err := readJSONFile(*outFile, &outputs); err != nil {
			return err
		}
	}
	for k, v := range outs {
		stage, name, ok := strings.Cut(k, ".")
		if !ok || stage == "" || name == "" {
			return fs.misuse("--output wants stage.name=value, got %q", k)
		}
		if outputs[stage] == nil {
			outputs[stage] = map[string]any{}
		}
		outputs[stage][name] = v
	}
	if *from != "" {
		body["from"] = *from
	}
	if len(cxs) > 0 {
		body["context"] = cxs
	}
	if len(outputs) > 0 {
		body["outputs"] = outputs
	}
	base := *server
	if base == "" {
		cfg, err := app.Load(app.Flags{}, c.getenv, "QUARRY_ADDR", "QUARRY_PUBLIC_URL")
		if err != nil {
			return err
		}
		base = cfg.PublicURL
		if base == "" {
			base = "http://" + strings.Replace(cfg.Addr, "0.0.0.0", "127.0.0.1", 1)
		}
	}
	base = strings.TrimRight(base, "/")
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/workflows/"+url.PathEscape(rest[0])+"/runs", bytes.NewReader(raw))
	if err != nil {
		return fs.misuse("bad server address %q: %v", base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("workflow start: is the server running at %s? %w", base, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Message string            `json:"message"`
				Fields  map[string]string `json:"fields"`
			} `json:"error"`
		}
		if err := json.NewDecoder(res.Body).Decode(&e); err != nil || e.Error.Message == "" {
			return fmt.Errorf("workflow start: the server answered %s", res.Status)
		}
		keys := make([]string, 0, len(e.Error.Fields))
		for k := range e.Error.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, err := fmt.Fprintf(c.stderr, "%s: %s\n", k, e.Error.Fields[k]); err != nil {
				return err
			}
		}
		return fault.Errorf(e.Error.Code, "workflow start: %s", e.Error.Message)
	}
	var created struct {
		ID     string `json:"id"`
		URL    string `json:"url"`
		Status string `json:"status"`
	}
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil {
		return fmt.Errorf("workflow start: %w", err)
	}
	_, err = fmt.Fprintf(c.stdout, "started run %s: %s%s\n", created.ID, base, created.URL)
	return err
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fault.Errorf(fault.EInvalid, "%s: %v", path, err)
	}
	return nil
}
