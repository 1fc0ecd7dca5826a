package arxiv

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills/sources/httpclient"
)

// TestNewKeepsToArxivTerms checks the client New builds sends one request
// every 3 s on one connection, as arXiv's terms of use ask, and that a
// client the caller built is used as it is.
func TestNewKeepsToArxivTerms(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Contact: "ada@example.org"})
	require.NoError(t, err)
	require.Equal(t, httpclient.Limit{Every: 3 * time.Second, Burst: 1, Concurrent: 1}, c.http.Limit())
	hc := httpclient.New(httpclient.Options{})
	c, err = New(Options{HTTP: hc})
	require.NoError(t, err)
	require.Same(t, hc, c.http)
}
