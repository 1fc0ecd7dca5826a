package def_test

import (
	"errors"
	"os"
	"testing"
	"testing/fstest"

	"quarry/internal/engine/def"

	"github.com/stretchr/testify/require"
)

func TestLoadFSKeepsGoodFilesNextToBadOnes(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile("testdata/living-review.yaml")
	require.NoError(t, err)
	fsys := fstest.MapFS{
		"a-living.yaml": {Data: good},
		"b-broken.yml":  {Data: []byte(head + "stages: [{id: a, type: skill, skill: nope}]\n")},
		"c-again.yaml":  {Data: good},
		"notes.txt":     {Data: []byte("not a workflow")},
		"sub/x.yaml":    {Data: []byte("ignored: true")},
	}
	got, err := def.LoadFS(fsys, opts)
	require.NoError(t, err)
	require.Len(t, got, 3)

	require.Equal(t, "a-living.yaml", got[0].File)
	require.NoError(t, got[0].Err)
	require.Equal(t, "living-review", got[0].Def.Metadata.Name)

	var list def.Errors
	require.True(t, errors.As(got[1].Err, &list))
	require.Equal(t, []string{`b-broken.yml:4:31: stage "a": skill "nope" is not registered`}, []string{list[0].Error()})

	require.True(t, errors.As(got[2].Err, &list))
	require.Equal(t, `c-again.yaml:1:1: workflow "living-review" is already defined in a-living.yaml`, list.Error())
}
