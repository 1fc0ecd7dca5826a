package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/research"
)

// invocation is what one call of quarry left behind: its exit status and
// its two output streams.
type invocation struct {
	code           int
	stdout, stderr string
}

// quarry runs the program as main does, with stdin as standard input and
// no environment but env, and returns what main would have exited with
// and printed.
func quarry(t *testing.T, stdin string, env map[string]string, args ...string) invocation {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &stdout, &stderr)
	code := exitCode(err, &stderr)
	return invocation{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ris := filepath.Join(dir, "a.ris")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantUsage string // on stderr, after the error; "" for none
		wantErr   string // on stderr
	}{
		{"Success", []string{"version"}, 0, "", ""},
		{"UnknownSubcommand", []string{"nosuch"}, 2, "Usage: quarry <subcommand>", `unknown subcommand "nosuch"`},
		{"UnknownFlag", []string{"import", "--nope", ris}, 2, "Usage: quarry import", "flag provided but not defined: -nope"},
		{"MissingArgument", []string{"dedup", "--out", filepath.Join(dir, "m.ris")}, 2, "Usage: quarry dedup", "dedup: no input files"},
		{"StrayArgument", []string{"serve", "extra"}, 2, "Usage: quarry serve", `serve: unexpected arguments ["extra"]`},
		{"UnknownFormatName", []string{"import", "--format", "docx", ris}, 2, "Usage: quarry import", `import: unknown format "docx"`},
		{"EvalWithoutDirectory", []string{"eval", "dedup"}, 2, "Usage: quarry eval", "want a kind"},
		{"HelpForNoSuchCommand", []string{"help", "nosuch"}, 2, "Usage: quarry <subcommand>", `unknown subcommand "nosuch"`},
		{"MissingFileIsAFailure", []string{"dedup", filepath.Join(dir, "nope.ris"), "--out", filepath.Join(dir, "m.ris")}, 1, "", "no such file"},
		{"BadConfigurationIsAFailure", []string{"serve", "--log-level", "loud"}, 1, "", `--log-level: "loud" is not one of debug, info, warn, error`},
		{"EmptyEvalDirIsAFailure", []string{"eval", "dedup", dir}, 1, "", "quarry: "},
		{"EvalSearchWithoutDataIsAFailure", []string{"eval", "search", filepath.Join(dir, "nope")}, 1, "", "quarry: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := quarry(t, "", nil, tt.args...)
			require.Equal(t, tt.wantCode, got.code, "stderr: %s", got.stderr)
			require.Contains(t, got.stderr, tt.wantErr)
			if tt.wantUsage != "" {
				require.Contains(t, got.stderr, "\n\n"+tt.wantUsage, "the usage follows the error")
				require.Empty(t, got.stdout, "the usage goes to stderr")
			} else {
				require.NotContains(t, got.stderr, "Usage:", "a failure is not a misuse")
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"Help", []string{"help"}, []string{"Subcommands:", "serve", "import", "dedup", "eval", "workflow", "version", "Exit status"}},
		{"DashH", []string{"-h"}, []string{"Subcommands:"}},
		{"DashDashHelp", []string{"--help"}, []string{"Subcommands:"}},
		{"HelpImport", []string{"help", "import"}, []string{"Usage: quarry import", "-format", "-db", "QUARRY_DB", "./quarry.db", "standard input"}},
		{"ImportDashH", []string{"import", "-h"}, []string{"Usage: quarry import", "-column"}},
		{"DedupDashHAfterArguments", []string{"dedup", "a.ris", "-h"}, []string{"Usage: quarry dedup", "-out-format"}},
		{"HelpEval", []string{"help", "eval"}, []string{"Usage: quarry eval", "screening DIR", "search DIR"}},
		{"HelpVersion", []string{"help", "version"}, []string{"Usage: quarry version"}},
		{"HelpWorkflow", []string{"help", "workflow"}, []string{"Usage: quarry workflow <validate|graph|start|trigger-token>", "validate FILE...", "graph FILE", "start NAME", "trigger-token WORKFLOW NAME"}},
		{"WorkflowGraphDashH", []string{"workflow", "graph", "-h"}, []string{"Usage: quarry workflow graph FILE [--format dot|svg|mermaid]", "-format"}},
		{"HelpServe", []string{"help", "serve"}, []string{"Usage: quarry serve", "--addr, QUARRY_ADDR (default: 127.0.0.1:8080)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := quarry(t, "", nil, tt.args...)
			require.Zero(t, got.code, "stderr: %s", got.stderr)
			require.Empty(t, got.stderr)
			for _, w := range tt.want {
				require.Contains(t, got.stdout, w)
			}
		})
	}
}

// TestServeHelpListsEverySetting: `quarry serve -h` names every setting's
// environment variable and default, so an operator needs no other page.
func TestServeHelpListsEverySetting(t *testing.T) {
	t.Parallel()
	got := quarry(t, "", nil, "serve", "-h")
	require.Zero(t, got.code)
	for _, want := range []string{
		"--addr, QUARRY_ADDR (default: 127.0.0.1:8080)", "--db, QUARRY_DB (default: ./quarry.db)",
		"QUARRY_SESSION_KEY", "--public-url, QUARRY_PUBLIC_URL", "--config, QUARRY_CONFIG",
		"--log-format, QUARRY_LOG_FORMAT, file: log_format (default: text)",
		"--log-level, QUARRY_LOG_LEVEL, file: log_level (default: info)",
		"QUARRY_SOURCES, file: sources (default: local)", "QUARRY_CONTACT_EMAIL",
		"QUARRY_SEMANTIC_SCHOLAR_KEY", "QUARRY_SERPAPI_KEY", "QUARRY_OPENALEX_KEY", "QUARRY_PUBMED_KEY",
		"QUARRY_ARXIV_URL, file: base_urls.arxiv (default: https://export.arxiv.org)",
		"QUARRY_STRATEGY_CHECKPOINT", "QUARRY_LLM_PROVIDER, file: llm.provider (default: offline)",
		"QUARRY_LLM_MODEL", "QUARRY_LLM_BASE_URL", "QUARRY_LLM_API_KEY", "QUARRY_LLM_TIMEOUT", "QUARRY_LLM_MAX_RETRIES",
	} {
		require.Contains(t, got.stdout, want)
	}
}

// TestFlagsAfterArguments: flags may follow the files, as in
// `quarry dedup a.ris b.json --out merged.ris`, and "--" ends them.
func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ris, csl := filepath.Join(dir, "pubmed.ris"), filepath.Join(dir, "zotero.json")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))
	require.NoError(t, os.WriteFile(csl, []byte(dedupCSL), 0o644))

	out := filepath.Join(dir, "merged.ris")
	got := quarry(t, "", nil, "dedup", ris, csl, "--out", out)
	require.Zero(t, got.code, got.stderr)
	require.Contains(t, got.stdout, "read 6 records from 2 files")
	require.FileExists(t, out)
	require.FileExists(t, filepath.Join(dir, "merged.merges.csv"))

	mixed := filepath.Join(dir, "mixed.bib")
	got = quarry(t, "", nil, "dedup", "--format", "ris", ris, "--out", mixed, "--report", filepath.Join(dir, "r.csv"))
	require.Zero(t, got.code, got.stderr)
	require.Contains(t, got.stdout, "read 3 records from 1 files")
	require.FileExists(t, filepath.Join(dir, "r.csv"))

	db := filepath.Join(dir, "q.db")
	got = quarry(t, "", nil, "import", ris, "--db", db)
	require.Zero(t, got.code, got.stderr)
	require.Contains(t, got.stdout, "imported 3 new")

	// After "--" a name that looks like a flag is a file.
	got = quarry(t, "", nil, "import", "--db", db, "--", "--format")
	require.Equal(t, 1, got.code)
	require.Contains(t, got.stderr, "open --format: no such file or directory")
}

// TestImportFromStdin: `cat refs.bib | quarry import -` reads the records
// from standard input, named "stdin" as /dev/stdin would be.
func TestImportFromStdin(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "q.db")
	bib := "@article{smith2019,\n  title = {Sleep and memory consolidation},\n  author = {Smith, John},\n  year = 2019\n}\n\n@article{broken,\n  author = {Nobody}\n}\n"
	got := quarry(t, bib, dbEnv(t, db, nil), "import", "-")
	require.Zero(t, got.code, got.stderr)
	require.Contains(t, got.stdout, "  stdin:7: missing title\n", "standard input is named stdin")
	require.Regexp(t, `(?m)^imported 1 new, 0 updated, 0 unchanged, 1 skipped \(1 missing title\) in [0-9.]+ s$`, got.stdout)

	st, err := openStore(t, context.Background(), db)
	require.NoError(t, err)
	defer st.Close()
	papers, err := st.SearchLibrary(context.Background(), `"consolidation"`, research.YearRange{}, 5)
	require.NoError(t, err)
	require.Len(t, papers, 1)

	got = quarry(t, bib, dbEnv(t, db, nil), "import", "-", "-")
	require.Equal(t, 2, got.code)
	require.Contains(t, got.stderr, "standard input (-) can be read only once")
}

// TestDedupToStdout: `quarry dedup a.ris - --out - --out-format bibtex`
// reads one input from standard input and writes the merged records to
// standard output, so its messages go to standard error; without
// --out-format there is no name to tell the format from.
func TestDedupToStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ris := filepath.Join(dir, "pubmed.ris")
	require.NoError(t, os.WriteFile(ris, []byte(dedupRIS), 0o644))

	got := quarry(t, dedupCSL, nil, "dedup", ris, "-", "--out", "-", "--out-format", "bibtex")
	require.Zero(t, got.code, got.stderr)
	require.Contains(t, got.stderr, "read 6 records from 2 files")
	require.Contains(t, got.stderr, "wrote 4 to standard output")
	require.Contains(t, got.stderr, "report: none")
	format, recs := readMerged(t, strings.NewReader(got.stdout))
	require.Equal(t, biblio.BibTeX, format)
	require.Len(t, recs, 4, "stdout holds the records and nothing else")

	got = quarry(t, "", nil, "dedup", ris, "--out", "-", "--report", filepath.Join(dir, "r.csv"), "--out-format", "ris")
	require.Zero(t, got.code, got.stderr)
	require.Contains(t, got.stderr, "report: "+filepath.Join(dir, "r.csv"))
	require.FileExists(t, filepath.Join(dir, "r.csv"))

	got = quarry(t, "", nil, "dedup", ris, "--out", "-")
	require.Equal(t, 2, got.code)
	require.Contains(t, got.stderr, "pass --out-format")
	require.Empty(t, got.stdout)
}

func TestVersionText(t *testing.T) {
	t.Parallel()
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"Stamped", "v1.2.3", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0940782abc", "vcs.time", "2026-05-01T10:00:00Z", "vcs.modified", "false")},
			"quarry v1.2.3\nrevision 0940782abc (2026-05-01T10:00:00Z)\nbuilt with go1.26.0\n"},
		{"ModuleVersion", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20260501100000-0940782abcde+dirty"},
			Settings: vcs("vcs.revision", "0940782abcde", "vcs.modified", "true")},
			"quarry v0.0.0-20260501100000-0940782abcde+dirty\nrevision 0940782abcde (modified)\nbuilt with go1.26.0\n"},
		{"NoVCS", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"quarry (devel)\nrevision unknown (built without version control information)\nbuilt with go1.26.0\n"},
		{"NoBuildInfo", "", nil, "quarry (devel)\nrevision unknown (built without version control information)\nbuilt with unknown\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, versionText(tt.stamped, tt.bi))
		})
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		got := quarry(t, "", nil, args...)
		require.Zero(t, got.code)
		require.Regexp(t, `^quarry \S+\nrevision .+\nbuilt with go`, got.stdout)
	}
	got := quarry(t, "", nil, "version", "extra")
	require.Equal(t, 2, got.code)
}

// TestEvalSearch runs `quarry eval search` on a one-review directory: the
// question finds one of its two included records, as does BM25.
func TestEvalSearch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "reviews.json"), []byte(`{"Tea":{"review_title":"green tea"}}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Tea.csv"), []byte("record_id,title,abstract,label_included\n1,Green tea and health,Drinking green tea.,1\n2,Coffee,Espresso.,1\n3,Black tea,Fermented leaves.,0\n"), 0o600))
	got := quarry(t, "", nil, "eval", "search", dir)
	require.Equal(t, 0, got.code, "stderr: %s", got.stderr)
	lines := strings.Split(strings.TrimSpace(got.stdout), "\n")
	require.Equal(t, "search: recall@100=0.5000 recall@500=0.5000 bm25_recall@100=0.5000 bm25_recall@500=0.5000", lines[len(lines)-1])
}
