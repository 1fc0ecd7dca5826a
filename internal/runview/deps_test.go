package runview_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportsNoWebOrSQL keeps the view model on the domain side of the
// handlers: it is built from a run and its checkpoints, so it never reaches
// for a request, a template or the database. (net/http is forbidden as a
// direct import only: the pipeline's online sources use it underneath.)
func TestImportsNoWebOrSQL(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command(goBin, append([]string{"list"}, args...)...).Output()
		require.NoError(t, err)
		return strings.Fields(string(out))
	}
	imports := list("-f", `{{join .Imports " "}}`, ".")
	require.NotContains(t, imports, "net/http", "runview must not import net/http")
	deps := list("-deps", ".")
	for _, bad := range []string{"github.com/labstack/echo/v4", "github.com/a-h/templ", "modernc.org/sqlite", "database/sql"} {
		require.NotContains(t, deps, bad, "runview must not depend on %s", bad)
	}
}
