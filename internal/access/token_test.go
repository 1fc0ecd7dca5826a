package access_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/access"
)

func TestNewToken(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		tok, err := access.NewToken("qk_")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(tok, "qk_"))
		require.Len(t, tok, 3+43)
		raw, err := base64.RawURLEncoding.DecodeString(tok[3:])
		require.NoError(t, err)
		require.Len(t, raw, 32)
		require.False(t, seen[tok], "duplicate token")
		seen[tok] = true
	}
}

func TestNewTokenPrefix(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"qs_", "QK2_", "a_"} {
		_, err := access.NewToken(p)
		require.NoError(t, err, p)
	}
	for _, p := range []string{"", "_", "qk", "q_k_", "q-k_", "qk__", "qk _"} {
		_, err := access.NewToken(p)
		require.Error(t, err, "%q", p)
	}
}

func TestHashToken(t *testing.T) {
	t.Parallel()
	// SHA-256("abc"), FIPS 180-2's first example.
	require.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", access.HashToken("abc"))
	tok, err := access.NewToken("qk_")
	require.NoError(t, err)
	h := access.HashToken(tok)
	require.Equal(t, h, access.HashToken(tok), "stable")
	require.Len(t, h, 64)
	require.Equal(t, strings.ToLower(h), h)
	require.NotEqual(t, h, access.HashToken(tok+"x"))
	require.NotContains(t, h, tok[3:])
}

func TestTokenPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"qk_AbCdEfGhIjKlMnOp", "qk_AbCdEfGh"},
		{"qk_Ab_dEfGhIj", "qk_Ab_dEfGh"}, // an underscore in the random part is not the prefix's
		{"qk_Abc", "qk_Abc"},
		{"qk_", "qk_"},
		{"AbCdEfGhIjKl", "AbCdEfGh"},
		{"", ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, access.TokenPrefix(tt.in), tt.in)
	}
	tok, err := access.NewToken("qs_")
	require.NoError(t, err)
	require.Equal(t, tok[:11], access.TokenPrefix(tok))
}
