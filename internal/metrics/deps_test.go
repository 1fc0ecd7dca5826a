package metrics_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOnlyTheAppLayerKnowsPrometheus keeps the observer hooks honest: the
// domain packages expose hooks and metrics implements them, never the
// other way round, and the engine, the searcher and library imports stay
// free of HTTP too.
func TestOnlyTheAppLayerKnowsPrometheus(t *testing.T) {
	t.Parallel()
	forbidden := map[string][]string{ // package prefix → imports it must never reach
		"quarry/internal/engine":          {"github.com/prometheus/", "net/http"},
		"quarry/internal/skills/searcher": {"github.com/prometheus/", "net/http"},
		"quarry/internal/library":         {"github.com/prometheus/", "net/http"},
		"quarry/internal/skills":          {"github.com/prometheus/"},
		"quarry/internal/store":           {"github.com/prometheus/"},
		"quarry/internal/handlers":        {"github.com/prometheus/"},
		"quarry/internal/research":        {"github.com/prometheus/"},
		"quarry/internal/biblio":          {"github.com/prometheus/"},
		"quarry/internal/report":          {"github.com/prometheus/"},
	}
	out, err := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", "quarry/...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var pkg struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&pkg); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		for prefix, bad := range forbidden {
			if !strings.HasPrefix(pkg.ImportPath, prefix) {
				continue
			}
			checked++
			for _, b := range bad {
				reaches := slices.ContainsFunc(pkg.Deps, func(d string) bool {
					return d == b || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b)
				})
				require.False(t, reaches, "%s must not depend on %s", pkg.ImportPath, b)
			}
		}
	}
	require.Positive(t, checked)
}
