package def_test

import (
	"net/url"
	"os"
	"testing"

	"quarry/internal/engine/def"

	"github.com/stretchr/testify/require"
)

var opts = def.Options{
	Skills:        []string{"search.parse_intent", "search.build_strategy", "search.run", "search.dedup", "search.score", "export.write", "s"},
	WebhookHosts:  []string{"hooks.example.org"},
	ExportFormats: []string{"bibtex", "ris"},
	Forms:         map[string][]string{"review": {"approve", "iterate", "more"}},
}

func TestLivingReviewLoadsClean(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/living-review.yaml")
	require.NoError(t, err)
	d, err := def.Load("living-review.yaml", src, opts)
	require.NoError(t, err)
	require.Equal(t, "living-review", d.Metadata.Name)
	require.Equal(t, 3, d.Metadata.Version)
	require.Len(t, d.Hash, 64)
	require.Len(t, d.Params, 6)
	require.Len(t, d.Stages, 10)
	search := d.Stages[2]
	require.Equal(t, def.TypeParallel, search.Type)
	require.Equal(t, "params.sources", search.ForEach.Src)
	require.Equal(t, def.JoinAny, search.Join.Mode)
	require.Equal(t, "source", search.Branches[0].ID)
	require.Equal(t, "fetch", search.Branches[0].Stages[0].ID)
	review := d.Stages[6]
	require.Len(t, review.Options, 3)
	require.Equal(t, "{{ params.max_iterations }}", review.OnFail.MaxIterations.Expr)
	require.Equal(t, def.ThenGoto, review.OnFail.Then.Action)
	wait := d.Stages[8]
	require.Equal(t, 7*24*60*60e9, float64(wait.Duration))
	require.Equal(t, "build", wait.OnComplete.ID)
}

// TestHostAllowed: a bare host allows it on any port, host:port that port
// only, without case; nothing else.
func TestHostAllowed(t *testing.T) {
	t.Parallel()
	hosts := []string{" Hooks.example.org ", "chat.example.org:8443", ""}
	for raw, want := range map[string]bool{
		"https://hooks.example.org/x":      true,
		"http://HOOKS.example.org:9000/x":  true,
		"https://chat.example.org:8443/x":  true,
		"https://chat.example.org/x":       false,
		"https://chat.example.org:9443/x":  false,
		"https://evil.example.org/x":       false,
		"https://hooks.example.org.evil/x": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := def.HostAllowed(hosts, u); got != want {
			t.Errorf("HostAllowed(%s) = %v, want %v", raw, got, want)
		}
	}
}
