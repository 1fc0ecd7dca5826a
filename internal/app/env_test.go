package app_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNothingBelowAppReadsTheEnvironment keeps the configuration in one
// place: no package under internal/ but app (which loads the settings),
// shareddata (which finds the test data sets), pgtest (which finds the
// PostgreSQL binaries for tests and reads CI) and store/storetest (which
// reads QUARRY_TEST_STORE, the tests' choice of database) reads the
// environment; the rest get their settings passed down as values.
func TestNothingBelowAppReadsTheEnvironment(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"app": true, "shareddata": true, "pgtest": true, "store/storetest": true}
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel("..", path); allowed[rel] || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		reads, err := environmentReads(path, nil)
		found = append(found, reads...)
		return err
	})
	require.NoError(t, err)
	require.Empty(t, found, "read settings in internal/app and pass them down instead")
}

// TestEnvironmentReadsAreFound checks the checker itself, on a file that
// reads the environment in each way it looks for.
func TestEnvironmentReadsAreFound(t *testing.T) {
	t.Parallel()
	src := `package x

import (
	"os"
	sys "syscall"
)

func f() {
	_ = os.Getenv("A")
	_, _ = os.LookupEnv("B")
	_ = os.Environ()
	_ = os.ExpandEnv("$C")
	_, _ = sys.Getenv("D")
	_ = os.Getwd
}
`
	reads, err := environmentReads("x.go", src)
	require.NoError(t, err)
	require.Equal(t, []string{"x.go:9: os.Getenv", "x.go:10: os.LookupEnv", "x.go:11: os.Environ",
		"x.go:12: os.ExpandEnv", "x.go:13: syscall.Getenv"}, reads)
}

// environmentReads lists where the Go file path (its text src, or read
// from disk when src is nil) uses a function of os or syscall that reads
// the environment, however the package is imported.
func environmentReads(path string, src any) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	readers := map[string][]string{
		"os":      {"Getenv", "LookupEnv", "Environ", "ExpandEnv"},
		"syscall": {"Getenv", "Environ"},
	}
	names := map[string]string{} // the name a file uses → the package
	for _, imp := range f.Imports {
		pkg, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := readers[pkg]; !ok {
			continue
		}
		name := pkg
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = pkg
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if pkg, ok := names[id.Name]; ok {
			for _, fn := range readers[pkg] {
				if sel.Sel.Name == fn {
					out = append(out, fmt.Sprintf("%s:%d: %s.%s", path, fset.Position(sel.Pos()).Line, pkg, fn))
				}
			}
		}
		return true
	})
	return out, nil
}
