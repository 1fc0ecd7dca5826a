package pubmed

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills/sources/httpclient"
)

// TestNewKeepsToNCBIRate checks the client New builds keeps to NCBI's 3
// requests/s, and to 10/s once an API key is configured.
func TestNewKeepsToNCBIRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, apiKey string
		want         httpclient.Limit
	}{
		{"NoKey", "", httpclient.Limit{Every: 334 * time.Millisecond, Burst: 1}},
		{"BlankKey", "  ", httpclient.Limit{Every: 334 * time.Millisecond, Burst: 1}},
		{"Key", " k3y ", httpclient.Limit{Every: 100 * time.Millisecond, Burst: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Options{APIKey: tt.apiKey})
			require.NoError(t, err)
			require.Equal(t, tt.want, c.ep.HTTP.Limit())
		})
	}
}
