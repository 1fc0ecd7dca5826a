package pgtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// debianRoot is where Debian's postgresql packages put each major
// version's server binaries: /usr/lib/postgresql/<major>/bin.
const debianRoot = "/usr/lib/postgresql"

// setupHint names the script that installs what the harness needs.
const setupHint = "run scripts/setup-postgres.sh (make test does) to install PostgreSQL from Debian"

// ErrNoPostgres is returned (wrapped) by Start when no initdb and postgres
// binaries are found, so callers can tell "not installed" apart from a
// server that failed to start.
var ErrNoPostgres = errors.New("pgtest: PostgreSQL server binaries not found")

// binDir returns the directory holding initdb and postgres: dir when set
// (Options.BinDir or QUARRY_PG_BIN), else the newest major version under
// /usr/lib/postgresql.
func binDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("QUARRY_PG_BIN")
	}
	if dir != "" {
		if err := hasServer(dir); err != nil {
			return "", fmt.Errorf("%w in %s (%v); %s", ErrNoPostgres, dir, err, setupHint)
		}
		return dir, nil
	}
	entries, _ := os.ReadDir(debianRoot)
	var majors []float64
	byMajor := map[float64]string{}
	for _, e := range entries {
		v, err := strconv.ParseFloat(e.Name(), 64) // "15", "9.6"
		if err != nil {
			continue
		}
		d := filepath.Join(debianRoot, e.Name(), "bin")
		if hasServer(d) == nil {
			majors = append(majors, v)
			byMajor[v] = d
		}
	}
	if len(majors) == 0 {
		return "", fmt.Errorf("%w under %s/*/bin; %s", ErrNoPostgres, debianRoot, setupHint)
	}
	return byMajor[slices.Max(majors)], nil
}

// hasServer reports whether dir holds executable initdb and postgres.
func hasServer(dir string) error {
	var missing []string
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no executable %s", strings.Join(missing, ", "))
	}
	return nil
}
