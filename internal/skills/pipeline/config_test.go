package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/pipeline"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "quarry.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"sources":["openalex","arxiv"],"contact_email":"file@example.org","serpapi_key":"k1","base_urls":{"arxiv":"http://127.0.0.1:1/"}}`), 0o600))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"sourcez":[]}`), 0o600))
	withLLM := filepath.Join(dir, "llm.json")
	require.NoError(t, os.WriteFile(withLLM, []byte(`{"sources":["arxiv"],"llm":{"provider":"openai","model":"qwen2.5:7b",
		"base_url":"http://localhost:11434/v1","api_key":"sk-file","timeout":"3m","max_retries":0}}`), 0o600))
	gemini := filepath.Join(dir, "gemini.json")
	require.NoError(t, os.WriteFile(gemini, []byte(`{"llm":{"provider":"gemini"}}`), 0o600))
	llmTypo := filepath.Join(dir, "llm-typo.json")
	require.NoError(t, os.WriteFile(llmTypo, []byte(`{"llm":{"temprature":0.2}}`), 0o600))
	f := false
	offline, err := llm.ConfigFromEnv(env(nil))
	require.NoError(t, err)
	openai := offline
	openai.Provider, openai.Model, openai.APIKey = llm.ProviderOpenAI, "m1", "sk-test"
	fromFile := llm.Config{Provider: llm.ProviderOpenAI, Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1",
		APIKey: "sk-file", Timeout: 3 * time.Minute, MaxRetries: 0}
	fileThenEnv := fromFile
	fileThenEnv.Model, fileThenEnv.APIKey, fileThenEnv.MaxRetries = "llama3.1", "sk-env", 4

	tests := []struct {
		name      string
		env       map[string]string
		want      pipeline.Config
		wantField string
	}{
		{"Empty", nil, pipeline.Config{}, ""},
		{"File", map[string]string{"QUARRY_CONFIG": file}, pipeline.Config{Sources: []string{"openalex", "arxiv"},
			ContactEmail: "file@example.org", SerpAPIKey: "k1", BaseURLs: map[string]string{"arxiv": "http://127.0.0.1:1/"}}, ""},
		{"EnvOverridesFile", map[string]string{"QUARRY_CONFIG": file, "QUARRY_SOURCES": " crossref , pubmed,",
			"QUARRY_CONTACT_EMAIL": "env@example.org", "QUARRY_STRATEGY_CHECKPOINT": "off", "QUARRY_PUBMED_URL": "http://x/"},
			pipeline.Config{Sources: []string{"crossref", "pubmed"}, ContactEmail: "env@example.org", SerpAPIKey: "k1",
				StrategyCheckpoint: &f, BaseURLs: map[string]string{"arxiv": "http://127.0.0.1:1/", "pubmed": "http://x/"}}, ""},
		{"LLMFromEnv", map[string]string{"QUARRY_LLM_PROVIDER": "openai", "QUARRY_LLM_MODEL": "m1", "OPENAI_API_KEY": "sk-test"},
			pipeline.Config{LLM: openai}, ""},
		{"LLMFromFile", map[string]string{"QUARRY_CONFIG": withLLM}, pipeline.Config{Sources: []string{"arxiv"}, LLM: fromFile}, ""},
		{"LLMEnvOverridesFile", map[string]string{"QUARRY_CONFIG": withLLM, "QUARRY_LLM_MODEL": "llama3.1",
			"QUARRY_LLM_API_KEY": "sk-env", "QUARRY_LLM_MAX_RETRIES": "4", "OPENAI_API_KEY": "sk-vendor"},
			pipeline.Config{Sources: []string{"arxiv"}, LLM: fileThenEnv}, ""},
		{"LLMUnknownProviderInFile", map[string]string{"QUARRY_CONFIG": gemini}, pipeline.Config{}, "llm.provider"},
		{"LLMUnknownKeyInFile", map[string]string{"QUARRY_CONFIG": llmTypo}, pipeline.Config{}, "QUARRY_CONFIG"},
		{"MissingFile", map[string]string{"QUARRY_CONFIG": filepath.Join(dir, "nope.json")}, pipeline.Config{}, "QUARRY_CONFIG"},
		{"UnknownKey", map[string]string{"QUARRY_CONFIG": bad}, pipeline.Config{}, "QUARRY_CONFIG"},
		{"BadBool", map[string]string{"QUARRY_STRATEGY_CHECKPOINT": "maybe"}, pipeline.Config{}, "QUARRY_STRATEGY_CHECKPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := pipeline.ConfigFromEnv(env(tt.env))
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				require.Contains(t, err.Error(), tt.wantField, "the message names the field to fix")
				return
			}
			require.NoError(t, err)
			if tt.want.LLM == (llm.Config{}) {
				tt.want.LLM = offline // the default: offline skills
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestConfigFileLLMBuildsProvider follows LLM settings from the file to a
// built workflow, and checks that the resolved configuration does not echo
// the key when serialised.
func TestConfigFileLLMBuildsProvider(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "quarry.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"sources":["arxiv"],"llm":{"provider":"anthropic","api_key":"sk-secret"}}`), 0o600))
	cfg, err := pipeline.ConfigFromEnv(env(map[string]string{"QUARRY_CONFIG": file}))
	require.NoError(t, err)
	require.Equal(t, llm.ProviderAnthropic, cfg.LLM.Provider)
	require.Equal(t, llm.DefaultAnthropicModel, cfg.LLM.Model)
	_, err = pipeline.FromConfig(cfg, nil, 0)
	require.NoError(t, err, "the file's key is enough for a hosted provider")
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NotContains(t, string(b), "sk-secret")
}

func TestFromConfigRejectsHostedLLMWithoutKey(t *testing.T) {
	t.Parallel()
	cfg := pipeline.Config{Sources: []string{"arxiv"}, LLM: llm.Config{Provider: llm.ProviderAnthropic, Model: "m"}}
	_, err := pipeline.FromConfig(cfg, nil, 0)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "ANTHROPIC_API_KEY")
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		cfg         pipeline.Config
		wantSources []string
		wantField   string
	}{
		{"DefaultIsLocal", pipeline.Config{Local: poolSource{"local"}}, []string{"local"}, ""},
		{"LocalUnavailable", pipeline.Config{}, nil, "sources"}, // wraps ErrNoSources
		{"LocalLeftOut", pipeline.Config{Sources: []string{"local", "arxiv", "arxiv"}}, []string{"arxiv"}, ""},
		{"AllOnline", pipeline.Config{Sources: []string{"openalex", "semantic_scholar", "arxiv", "crossref", "pubmed", "serpapi_scholar"}, SerpAPIKey: "k"},
			[]string{"openalex", "semantic_scholar", "arxiv", "crossref", "pubmed", "serpapi_scholar"}, ""},
		{"Unknown", pipeline.Config{Sources: []string{"scopus"}}, nil, "sources[0]"},
		{"SerpAPIWithoutKey", pipeline.Config{Sources: []string{"serpapi_scholar"}}, nil, "serpapi_key"},
		{"UnknownBaseURL", pipeline.Config{Sources: []string{"arxiv"}, BaseURLs: map[string]string{"scopus": "http://x"}}, nil, "base_urls.scopus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sw, err := pipeline.FromConfig(tt.cfg, nil, 0)
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				require.Equal(t, tt.name == "LocalUnavailable", errors.Is(err, pipeline.ErrNoSources))
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

// TestFromConfigRunsOffline runs the real offline skills end to end over a
// local source, with nobody to ask.
func TestFromConfigRunsOffline(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	sw, err := pipeline.FromConfig(pipeline.Config{Local: poolSource{"local"}}, nil, 3)
	require.NoError(t, err)
	coll, ws, err := sw.Run(context.Background(), st, "How does SQLite WAL mode affect crash recovery?")
	require.NoError(t, err)
	require.NoError(t, coll.Validate())
	require.True(t, ws.IsComplete)
	require.Len(t, ws.History, 1)
	require.Equal(t, []string{"local"}, ws.History[0].Strategy.Sources)
}
