package templates_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine/def"
	"quarry/internal/skills/named"
	"quarry/internal/templates"
)

// TestTemplatesLoad: every embedded template loads clean against the named
// skills, as `quarry workflow validate` checks it, and the two the issue
// asks for are there.
func TestTemplatesLoad(t *testing.T) {
	t.Parallel()
	files, err := def.LoadFS(templates.FS(), def.Options{Skills: named.Names()})
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		require.NoError(t, f.Err, f.File)
		names = append(names, f.Def.Metadata.Name)
	}
	require.Equal(t, []string{"living-review", "screening"}, names)
}
