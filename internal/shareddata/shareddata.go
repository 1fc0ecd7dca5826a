// Package shareddata locates the team's shared third-party datasets (the
// labelled deduplication and screening sets and the paper corpora) for
// tests, benchmarks and evaluations. They live in ../shared/data beside the
// repository and are never copied into it, so a test must find them from
// wherever the repository was cloned, and skip with a clear message when
// they are absent.
package shareddata

import (
	"os"
	"path/filepath"
)

// EnvVar overrides where the datasets are looked for.
const EnvVar = "QUARRY_SHARED_DATA"

// Dir returns the path of sub (e.g. "screening") inside the shared data
// directory: $QUARRY_SHARED_DATA when set, else ../shared/data beside the
// repository that contains the working directory (found by its go.mod),
// else /work/shared/data, where the team's machines keep it. The path is
// returned even when it does not exist, so the caller's skip message can
// name where it looked.
func Dir(sub string) string {
	if d := os.Getenv(EnvVar); d != "" {
		return filepath.Join(d, sub)
	}
	if root, ok := repoRoot(); ok {
		d := filepath.Join(filepath.Dir(root), "shared", "data")
		if _, err := os.Stat(d); err == nil {
			return filepath.Join(d, sub)
		}
	}
	return filepath.Join("/work/shared/data", sub)
}

// repoRoot walks up from the working directory (a package's directory
// under go test) to the first directory holding go.mod.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
