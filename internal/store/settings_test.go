package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/store"
)

func TestSettingOrInitKeepsTheFirstValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := store.OpenForTest(t, ctx, path, store.Options{})
	require.NoError(t, err)

	_, err = s.Setting(ctx, "session_key")
	require.Equal(t, fault.ENotFound, fault.ErrorCode(err))

	v, err := s.SettingOrInit(ctx, "session_key", []byte("first"))
	require.NoError(t, err)
	require.Equal(t, "first", string(v))
	v, err = s.SettingOrInit(ctx, "session_key", []byte("second"))
	require.NoError(t, err)
	require.Equal(t, "first", string(v))
	require.NoError(t, s.Close())

	// A restart on the same database sees the stored value.
	s, err = store.OpenForTest(t, ctx, path, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	v, err = s.Setting(ctx, "session_key")
	require.NoError(t, err)
	require.Equal(t, "first", string(v))
}
