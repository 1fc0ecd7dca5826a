package crossref

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills/sources/httpclient"
)

// TestNewKeepsToCrossrefPool checks the client New builds keeps to the
// list-request limits of the pool a request lands in: polite with a
// contact address, public without.
func TestNewKeepsToCrossrefPool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contact string
		want          httpclient.Limit
	}{
		{"Public", "", httpclient.Limit{Every: time.Second, Burst: 1, Concurrent: 1}},
		{"Polite", "ada@example.org", httpclient.Limit{Every: 334 * time.Millisecond, Burst: 1, Concurrent: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Options{Contact: tt.contact})
			require.NoError(t, err)
			require.Equal(t, tt.want, c.ep.HTTP.Limit())
		})
	}
}
