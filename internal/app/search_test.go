package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// nameOnly is a source that finds nothing: enough to build a workflow.
type nameOnly struct{ name string }

func (s nameOnly) Name() string { return s.name }

func (nameOnly) Search(context.Context, sources.SourceRequest) ([]research.RawPaper, error) {
	return nil, nil
}

func TestNewSearchRejectsHostedLLMWithoutKey(t *testing.T) {
	t.Parallel()
	s := app.Search{Sources: []string{"arxiv"}, LLM: llm.Config{Provider: llm.ProviderAnthropic, Model: "m"}}
	_, err := app.NewSearch(s, nil, nil)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "ANTHROPIC_API_KEY")
}

func TestNewSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		search      app.Search
		lib         sources.Source
		wantSources []string
		wantField   string
	}{
		{"DefaultIsLocal", app.Search{}, nameOnly{"local"}, []string{"local"}, ""},
		{"LocalUnavailable", app.Search{}, nil, nil, "sources"}, // wraps ErrNoSources
		{"LocalLeftOut", app.Search{Sources: []string{"local", "arxiv", "arxiv"}}, nil, []string{"arxiv"}, ""},
		{"AllOnline", app.Search{Sources: []string{"openalex", "semantic_scholar", "arxiv", "crossref", "pubmed", "serpapi_scholar"}, SerpAPIKey: "k", OpenAlexKey: "k"}, nil,
			[]string{"openalex", "semantic_scholar", "arxiv", "crossref", "pubmed", "serpapi_scholar"}, ""},
		{"Unknown", app.Search{Sources: []string{"scopus"}}, nil, nil, "sources[0]"},
		{"SerpAPIWithoutKey", app.Search{Sources: []string{"serpapi_scholar"}}, nil, nil, "serpapi_key"},
		{"OpenAlexWithoutKey", app.Search{Sources: []string{"openalex"}}, nil, nil, "openalex_key"},
		{"UnknownBaseURL", app.Search{Sources: []string{"arxiv"}, BaseURLs: map[string]string{"scopus": "http://x"}}, nil, nil, "base_urls.scopus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sw, err := app.NewSearch(tt.search, tt.lib, nil)
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				require.Equal(t, tt.name == "LocalUnavailable", errors.Is(err, app.ErrNoSources))
				return
			}
			require.NoError(t, err)
			params, err := sw.Workflow().Params()
			require.NoError(t, err)
			for _, p := range params {
				if p.Name == pipeline.ParamSources {
					require.Equal(t, tt.wantSources, p.Choices)
					require.Equal(t, tt.wantSources, p.Default)
				}
				if p.Name == pipeline.ParamMaxIterations {
					require.Equal(t, pipeline.DefaultMaxIterations, p.Default)
				}
			}
		})
	}
}

// TestNewSearchRunsOffline runs the real offline skills end to end over
// the demo library, with nobody to ask.
func TestNewSearchRunsOffline(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "q.db")
	a, err := newApp(t, t.Context(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: db}) // seeds the demo library
	require.NoError(t, err)
	require.NoError(t, a.Close(), "no job worker of the app's may take the run's jobs")
	st, err := store.Open(t.Context(), storetest.DSN(t, &pg, db), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	lib, err := local.New(st)
	require.NoError(t, err)
	sw, err := app.NewSearch(app.Search{}, lib, st)
	require.NoError(t, err)
	coll, ws, err := sw.Run(context.Background(), st, "How does SQLite WAL mode affect crash recovery?")
	require.NoError(t, err)
	require.NoError(t, coll.Validate())
	require.True(t, ws.IsComplete)
	require.Len(t, ws.History, 1)
	require.Equal(t, []string{"local"}, ws.History[0].Strategy.Sources)
}
