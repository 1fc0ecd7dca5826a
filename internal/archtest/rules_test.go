// Package archtest keeps docs/architecture.md's dependency rules true: the
// architecture is what `go list` says, so a forbidden import fails a test
// instead of waiting for a reviewer to notice it.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "quarry"

// pkg is the part of `go list -json` the rules read.
type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string // direct imports of the non-test files
	Deps       []string // everything they reach, transitively
	GoFiles    []string
}

// rule forbids the packages matching From to reach any package matching
// one of To. Direct rules look only at a package's own imports: "only the
// store imports the SQLite driver" must let the app import the store.
type rule struct {
	name   string
	from   func(string) bool
	to     []string // prefixes; "quarry/" prefixes match a package and everything below it
	except func(string) bool
	direct bool
}

// under matches a package and the packages below it.
func under(prefixes ...string) func(string) bool {
	return func(p string) bool {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				return true
			}
		}
		return false
	}
}

// centre is the domain centre: it may import only itself and the standard
// library (and golang.org/x/text for Unicode folding).
var centre = []string{"quarry/internal/fault", "quarry/internal/research"}

// web, html and sqlDriver name the outside worlds the engine and the
// skills must not know.
var (
	web       = []string{"net/http", "github.com/labstack/echo", "github.com/gorilla/", "quarry/internal/handlers", "quarry/internal/views"}
	html      = []string{"html/template", "github.com/a-h/templ", "quarry/internal/views"}
	sqlDriver = []string{"database/sql", "modernc.org/sqlite", "github.com/riverqueue/river", "github.com/jackc/pgx", "quarry/internal/store"}
)

func rules() []rule {
	return []rule{
		{
			name: "the domain centre imports nothing of ours outside the centre",
			from: under(centre...),
			to:   []string{module + "/"},
			except: func(p string) bool {
				return under(centre...)(p)
			},
		},
		{
			name: "the engine imports no HTTP, HTML, SQL-driver or search-domain package",
			from: under("quarry/internal/engine"),
			to: slices.Concat(web, html, sqlDriver, []string{
				"quarry/internal/research", "quarry/internal/skills", "quarry/internal/biblio",
				"quarry/internal/library", "quarry/internal/report", "quarry/internal/app",
			}),
		},
		{
			name: "skills import no web-server, HTML or SQL-driver package (sources may be HTTP clients)",
			from: under("quarry/internal/skills"),
			to: slices.Concat([]string{"github.com/labstack/echo", "github.com/gorilla/", "quarry/internal/handlers", "quarry/internal/app"},
				html, sqlDriver, []string{"quarry/internal/library", "quarry/internal/report"}),
		},
		{
			// Definition files are read and checked before any engine,
			// store or skill exists, so the CLI, the pages and the engine
			// can all load them; the engine imports def, never the reverse.
			name: "workflow definitions (engine/def) import nothing of ours but fault",
			from: under("quarry/internal/engine/def"),
			to:   []string{module + "/"},
			except: func(p string) bool {
				return under("quarry/internal/engine/def", "quarry/internal/fault")(p)
			},
		},
		{
			// Roles, passwords and tokens are rules with no storage or
			// transport: the store and the handlers both use them.
			name: "accounts' rules (access) import nothing of ours but fault",
			from: under("quarry/internal/access"),
			to:   slices.Concat([]string{module + "/"}, web, html, sqlDriver),
			except: func(p string) bool {
				return under("quarry/internal/access", "quarry/internal/fault")(p)
			},
		},
		{
			// The pipeline defines the search as an engine workflow; every
			// other skill is a plain function of domain values.
			name: "skills other than the pipeline do not reach the engine",
			from: func(p string) bool {
				return under("quarry/internal/skills")(p) && !under("quarry/internal/skills/pipeline")(p)
			},
			to: []string{"quarry/internal/engine"},
		},
		{
			// The run's view model is built from a run and its
			// checkpoints, so the page and the API share it and it is
			// tested without a request, a template or the database.
			name: "the run view model reaches no web, HTML or SQL package",
			from: under("quarry/internal/runview"),
			to:   slices.Concat([]string{"github.com/labstack/echo", "quarry/internal/handlers"}, html, sqlDriver),
		},
		{
			name:   "the run view model imports net/http nowhere itself (the pipeline's sources are HTTP clients)",
			from:   under("quarry/internal/runview"),
			to:     []string{"net/http"},
			direct: true,
		},
		{
			name: "file formats import no skill, store or engine",
			from: under("quarry/internal/biblio"),
			to:   []string{"quarry/internal/skills", "quarry/internal/engine", "quarry/internal/store", "quarry/internal/library", "quarry/internal/handlers"},
		},
		{
			// What both sides need (research.Compounds) sits in the centre;
			// the library calls the store, never the other way round.
			name: "the store imports no library, skill, file format, report or web package",
			from: under("quarry/internal/store"),
			to:   []string{"quarry/internal/library", "quarry/internal/skills", "quarry/internal/biblio", "quarry/internal/report", "quarry/internal/handlers", "quarry/internal/views", "quarry/internal/runview", "quarry/internal/app"},
		},
		{
			// pgtest, the throwaway-PostgreSQL harness, creates its
			// databases with pgx; the next rule keeps it in tests.
			name: "only the store (and the test harness pgtest) imports the SQL drivers",
			from: func(p string) bool {
				return strings.HasPrefix(p, module) && !under("quarry/internal/store", "quarry/internal/pgtest")(p)
			},
			to:     []string{"modernc.org/sqlite", "github.com/riverqueue/river/riverdriver", "github.com/jackc/pgx", "github.com/pressly/goose"},
			direct: true,
		},
		{
			// storetest is the tests' switch onto PostgreSQL and stands on
			// pgtest; a package importing storetest reaches pgtest too.
			name: "only tests import the PostgreSQL test harness (pgtest, storetest)",
			from: func(p string) bool {
				return strings.HasPrefix(p, module) && !under("quarry/internal/pgtest", "quarry/internal/store/storetest")(p)
			},
			to: []string{"quarry/internal/pgtest", "quarry/internal/store/storetest"},
		},
		{
			// Domain packages expose observer hooks; internal/metrics
			// implements them with Prometheus and the app wires the two.
			name: "only metrics and the app know Prometheus",
			from: func(p string) bool {
				return strings.HasPrefix(p, module) && !under("quarry/internal/metrics", "quarry/internal/app", "quarry/cmd", "quarry/e2e")(p)
			},
			to: []string{"github.com/prometheus/"},
		},
		{
			name: "the searcher and the library reach no HTTP package",
			from: under("quarry/internal/skills/searcher", "quarry/internal/library"),
			to:   web,
		},
		{
			name: "the web layer is reached only from the app",
			from: func(p string) bool {
				return strings.HasPrefix(p, module) && !under("quarry/internal/app", "quarry/internal/handlers", "quarry/internal/views", "quarry/cmd", "quarry/e2e")(p)
			},
			to: []string{"quarry/internal/handlers", "quarry/internal/views", "github.com/labstack/echo", "github.com/a-h/templ"},
		},
	}
}

func TestDependencyRules(t *testing.T) {
	t.Parallel()
	pkgs := goList(t, "../../...")
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages; is the test running from internal/archtest?", len(pkgs))
	}
	for _, r := range rules() {
		for _, p := range pkgs {
			if !r.from(p.ImportPath) {
				continue
			}
			reach := p.Deps
			if r.direct {
				reach = p.Imports
			}
			for _, d := range reach {
				if r.except != nil && r.except(d) {
					continue
				}
				if matchesAny(d, r.to) {
					t.Errorf("%s: %s imports %s%s", r.name, p.ImportPath, d, via(r, p, d, pkgs))
				}
			}
		}
	}
}

// TestNoInitNoCatchAllPackages keeps two house rules the compiler cannot:
// no init() registration and no util/common/helpers packages.
func TestNoInitNoCatchAllPackages(t *testing.T) {
	t.Parallel()
	for _, p := range goList(t, "../../...") {
		switch filepath.Base(p.ImportPath) {
		case "util", "utils", "common", "helpers", "misc", "models":
			t.Errorf("%s: a catch-all package name; organise by responsibility", p.ImportPath)
		}
		for _, f := range p.GoFiles {
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(src, []byte("\nfunc init() {")) {
				t.Errorf("%s/%s: func init(); wire it in main or the app instead", p.ImportPath, f)
			}
		}
	}
}

// TestRulesCatchAForbiddenImport proves the rules can fail: a package of
// the centre that imported the engine would be reported.
func TestRulesCatchAForbiddenImport(t *testing.T) {
	t.Parallel()
	fake := pkg{ImportPath: "quarry/internal/research", Deps: []string{"fmt", "quarry/internal/engine"}}
	found := false
	for _, r := range rules() {
		if r.from(fake.ImportPath) {
			for _, d := range fake.Deps {
				if (r.except == nil || !r.except(d)) && matchesAny(d, r.to) {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("a centre package importing the engine was not reported")
	}
}

func matchesAny(dep string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasSuffix(pre, "/") && strings.HasPrefix(dep, pre) || dep == pre || strings.HasPrefix(dep, pre+"/") {
			return true
		}
	}
	return false
}

// via names the direct import through which p reaches d, so a failure
// points at the line to change.
func via(r rule, p pkg, d string, all map[string]pkg) string {
	if r.direct || slices.Contains(p.Imports, d) {
		return ""
	}
	for _, imp := range p.Imports {
		if q, ok := all[imp]; ok && slices.Contains(q.Deps, d) {
			return " (through " + imp + ")"
		}
	}
	return ""
}

func goList(t *testing.T, pattern string) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", pattern)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}
