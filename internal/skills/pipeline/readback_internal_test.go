package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
)

// stored is a Written whose state is a map.
type stored engine.State

func (s stored) State(_ context.Context, key string) (json.RawMessage, bool, error) {
	raw, ok := s[key]
	return raw, ok, nil
}

// The search steps' read-backs pass when the stored papers are the ones
// written, and fail naming the difference otherwise.
func TestSearchStepsReadBackTheirPapers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rbs := readBacks()
	for _, step := range []string{StepSearch, StepDedup, StepScore, StepOrganize, StepMore, StepFinalize} {
		require.Len(t, rbs[nativePrefix+step], 1, step)
	}
	check := rbs[nativePrefix+StepSearch][0].Check
	u := engine.Update{keySearch: json.RawMessage(`{"papers":[{"id":"a"},{"id":"b"}],"sources":{}}`)}
	require.NoError(t, check(ctx, stored(u), u))
	require.EqualError(t, check(ctx, stored{keySearch: json.RawMessage(`{"papers":[{"id":"a"}]}`)}, u), "search: 2 papers written, 1 stored")
	require.EqualError(t, check(ctx, stored{keySearch: json.RawMessage(`{"papers":[{"id":"b"},{"id":"a"}]}`)}, u), "search: the stored papers are not the ones written")
	require.EqualError(t, check(ctx, stored{}, u), "search was written but is not stored")
	require.NoError(t, check(ctx, stored{}, engine.Update{}), "nothing written, nothing to check")

	scored := rbs[nativePrefix+StepScore][0].Check
	u = engine.Update{keyScored: json.RawMessage(`[{"id":"a","score":1}]`)}
	require.NoError(t, scored(ctx, stored(u), u))
	require.Error(t, scored(ctx, stored{keyScored: json.RawMessage(`[]`)}, u))
}
