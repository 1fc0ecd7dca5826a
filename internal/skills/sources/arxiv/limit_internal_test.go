package arxiv

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills/sources/httpclient"
)

// TestNewKeepsToArxivTerms checks the client New builds sends one request
// every 3 s on one connection, as arXiv's terms of use ask, with a query's
// wait for its turn bounded (DefaultMaxQueueWait unless Options says
// otherwise), and that a client the caller built is used as it is.
func TestNewKeepsToArxivTerms(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Contact: "ada@example.org"})
	require.NoError(t, err)
	require.Equal(t, httpclient.Limit{Every: 3 * time.Second, Burst: 1, Concurrent: 1, MaxQueueWait: DefaultMaxQueueWait}, c.ep.HTTP.Limit())
	c, err = New(Options{MaxQueueWait: time.Minute})
	require.NoError(t, err)
	require.Equal(t, httpclient.Limit{Every: 3 * time.Second, Burst: 1, Concurrent: 1, MaxQueueWait: time.Minute}, c.ep.HTTP.Limit())
	hc := httpclient.New(httpclient.Options{})
	c, err = New(Options{HTTP: hc})
	require.NoError(t, err)
	require.Same(t, hc, c.ep.HTTP)
}
