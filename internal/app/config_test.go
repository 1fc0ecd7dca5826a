package app_test

import (
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/searcher"
	"quarry/internal/store"
)

// offlineLLM is the LLM configuration nothing sets: the offline skills.
var offlineLLM = llm.Config{Provider: llm.ProviderOffline, Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}

// offlineEmbed is the embeddings configuration nothing sets: no vectors.
var offlineEmbed = embed.Config{Provider: embed.ProviderOffline, Timeout: embed.DefaultTimeout, MaxRetries: embed.DefaultMaxRetries}

// defaultSearch is the search configuration nothing sets.
func defaultSearch() app.Search {
	on := true
	return app.Search{Sources: []string{"local"}, StrategyCheckpoint: &on, LLM: offlineLLM, Embed: offlineEmbed}
}

// configFile writes content as a QUARRY_CONFIG file and returns its path.
func configFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "quarry.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// TestLoadPrecedence: each setting comes from its flag, else its
// environment variable, else the file, else its default, one setting at a
// time.
func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	file := configFile(t, `{"log_level":"warn","log_format":"json","sources":["arxiv"],"llm":{"model":"file-model"}}`)
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantLevel  slog.Level
		wantFormat string
		wantSrc    []string
		wantModel  string
	}{
		{"Defaults", nil, nil, slog.LevelInfo, app.LogText, []string{"local"}, ""},
		{"File", nil, map[string]string{"QUARRY_CONFIG": file}, slog.LevelWarn, app.LogJSON, []string{"arxiv"}, "file-model"},
		{"EnvOverFile", nil, map[string]string{"QUARRY_CONFIG": file, "QUARRY_LOG_LEVEL": "error", "QUARRY_SOURCES": "crossref"},
			slog.LevelError, app.LogJSON, []string{"crossref"}, "file-model"},
		{"FlagOverEnv", []string{"--log-level", "debug", "--log-format=text"},
			map[string]string{"QUARRY_CONFIG": file, "QUARRY_LOG_LEVEL": "error", "QUARRY_LOG_FORMAT": "json"},
			slog.LevelDebug, app.LogText, []string{"arxiv"}, "file-model"},
		{"FlagOverDefault", []string{"-log-level", "WARN"}, nil, slog.LevelWarn, app.LogText, []string{"local"}, ""},
		{"BlankEnvIsUnset", nil, map[string]string{"QUARRY_CONFIG": file, "QUARRY_LOG_LEVEL": "  ", "QUARRY_LLM_MODEL": ""},
			slog.LevelWarn, app.LogJSON, []string{"arxiv"}, "file-model"},
		{"ConfigFileFromFlag", []string{"--config", file}, map[string]string{"QUARRY_CONFIG": filepath.Join(t.TempDir(), "nope.json")},
			slog.LevelWarn, app.LogJSON, []string{"arxiv"}, "file-model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := load(t, tt.env, tt.args...)
			require.NoError(t, err)
			require.Equal(t, tt.wantLevel, cfg.LogLevel)
			require.Equal(t, tt.wantFormat, cfg.LogFormat)
			require.Equal(t, tt.wantSrc, cfg.Search.Sources)
			require.Equal(t, tt.wantModel, cfg.Search.LLM.Model)
		})
	}
}

// TestLoadErrorsNameTheSetting: a bad value stops start-up naming where it
// came from, so the person fixing it knows which flag, variable or key to
// edit; an overridden bad value is not checked.
func TestLoadErrorsNameTheSetting(t *testing.T) {
	t.Parallel()
	bad := configFile(t, `{"log_level":"loud"}`)
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantField string // "" for no error
	}{
		{"Flag", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"Env", nil, map[string]string{"QUARRY_LOG_FORMAT": "xml"}, "QUARRY_LOG_FORMAT"},
		{"File", nil, map[string]string{"QUARRY_CONFIG": bad}, "log_level"},
		{"FileOverriddenByEnv", nil, map[string]string{"QUARRY_CONFIG": bad, "QUARRY_LOG_LEVEL": "info"}, ""},
		{"FileOverriddenByFlag", []string{"--log-level=debug"}, map[string]string{"QUARRY_CONFIG": bad}, ""},
		{"ConfigFlagMissing", []string{"--config", filepath.Join(t.TempDir(), "nope.json")}, nil, "--config"},
		{"InvalidAddr", []string{"--addr", "no-port"}, nil, "addr"},
		{"EmptyFlagClearsEnv", []string{"--addr="}, map[string]string{"QUARRY_ADDR": "127.0.0.1:0"}, "addr"},
		{"ShortSessionKey", nil, map[string]string{"QUARRY_SESSION_KEY": "short"}, "session_key"},
		{"DatabaseURLNotPostgres", nil, map[string]string{"QUARRY_DATABASE_URL": "mysql://db/quarry"}, "database_url"},
		{"DatabaseURLPostgres", nil, map[string]string{"QUARRY_DATABASE_URL": "postgres://db/quarry"}, ""},
		{"UnknownSource", nil, map[string]string{"QUARRY_SOURCES": "local,scopus"}, "sources[1]"},
		{"SerpAPIWithoutKey", nil, map[string]string{"QUARRY_SOURCES": "serpapi_scholar"}, "serpapi_key"},
		{"OpenAlexWithoutKey", nil, map[string]string{"QUARRY_SOURCES": "local,openalex"}, "openalex_key"},
		{"OpenAlexWithKey", nil, map[string]string{"QUARRY_SOURCES": "local,openalex", "QUARRY_OPENALEX_KEY": "k"}, ""},
		{"WorkflowLimitNotANumber", nil, map[string]string{"QUARRY_WORKFLOW_LIMITS": "screening=2,search=many"}, "QUARRY_WORKFLOW_LIMITS"},
		{"WorkflowLimitTwice", nil, map[string]string{"QUARRY_WORKFLOW_LIMITS": "screening=2,screening=3"}, "QUARRY_WORKFLOW_LIMITS"},
		{"NegativeMaxActiveRuns", nil, map[string]string{"QUARRY_MAX_ACTIVE_RUNS": "-1"}, "QUARRY_MAX_ACTIVE_RUNS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tt.env, tt.args...)
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
			require.Contains(t, fault.ErrorFields(err), tt.wantField)
			require.Contains(t, err.Error(), tt.wantField, "the message names the setting to fix")
		})
	}
}

// TestLoadOnly: a command that needs only the database (import) is not
// stopped by a problem in the other settings.
func TestLoadOnly(t *testing.T) {
	t.Parallel()
	getenv := func(k string) string {
		return map[string]string{"QUARRY_DB": "/var/q.db", "QUARRY_ADDR": "no-port", "QUARRY_LLM_PROVIDER": "gemini",
			"QUARRY_CONFIG": filepath.Join(t.TempDir(), "nope.json")}[k]
	}
	cfg, err := app.Load(app.Flags{}, getenv, "QUARRY_DB")
	require.NoError(t, err)
	require.Equal(t, app.Config{DB: "/var/q.db"}, cfg)
	cfg, err = app.Load(app.Flags{"db": "/tmp/x.db"}, getenv, "QUARRY_DB")
	require.NoError(t, err)
	require.Equal(t, "/tmp/x.db", cfg.DB)
	_, err = app.Load(app.Flags{}, getenv)
	require.Error(t, err, "a full load checks everything")
}

// TestLoadSearch covers the search settings: file, environment over file
// key by key, and the file's own problems reported under QUARRY_CONFIG.
func TestLoadSearch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "quarry.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"sources":["openalex","arxiv"],"contact_email":"file@example.org","serpapi_key":"k1","openalex_key":"ok1","base_urls":{"arxiv":"http://127.0.0.1:1/"}}`), 0o600))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"sourcez":[]}`), 0o600))
	withLLM := filepath.Join(dir, "llm.json")
	require.NoError(t, os.WriteFile(withLLM, []byte(`{"sources":["arxiv"],"llm":{"provider":"openai","model":"qwen2.5:7b",
		"base_url":"http://localhost:11434/v1","api_key":"sk-file","timeout":"3m","max_retries":0}}`), 0o600))
	gemini := filepath.Join(dir, "gemini.json")
	require.NoError(t, os.WriteFile(gemini, []byte(`{"llm":{"provider":"gemini"}}`), 0o600))
	llmTypo := filepath.Join(dir, "llm-typo.json")
	require.NoError(t, os.WriteFile(llmTypo, []byte(`{"llm":{"temprature":0.2}}`), 0o600))
	notJSON := filepath.Join(dir, "not.json")
	require.NoError(t, os.WriteFile(notJSON, []byte(`sources = ["arxiv"]`), 0o600))
	f := false
	openai := offlineLLM
	openai.Provider, openai.Model, openai.APIKey = llm.ProviderOpenAI, "m1", "sk-test"
	fromFile := llm.Config{Provider: llm.ProviderOpenAI, Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1",
		APIKey: "sk-file", Timeout: 3 * time.Minute, MaxRetries: 0, RunTokenBudget: llm.DefaultRunTokenBudget}
	fileThenEnv := fromFile
	fileThenEnv.Model, fileThenEnv.APIKey, fileThenEnv.MaxRetries = "llama3.1", "sk-env", 4
	search := func(change func(*app.Search)) app.Search {
		s := defaultSearch()
		change(&s)
		return s
	}

	tests := []struct {
		name      string
		env       map[string]string
		want      app.Search
		wantField string
	}{
		{"Empty", nil, defaultSearch(), ""},
		{"File", map[string]string{"QUARRY_CONFIG": file}, search(func(s *app.Search) {
			s.Sources, s.ContactEmail, s.SerpAPIKey, s.OpenAlexKey = []string{"openalex", "arxiv"}, "file@example.org", "k1", "ok1"
			s.BaseURLs = map[string]string{"arxiv": "http://127.0.0.1:1/"}
		}), ""},
		{"EnvOverridesFile", map[string]string{"QUARRY_CONFIG": file, "QUARRY_SOURCES": " crossref , pubmed,",
			"QUARRY_CONTACT_EMAIL": "env@example.org", "QUARRY_STRATEGY_CHECKPOINT": "off", "QUARRY_PUBMED_URL": "http://x/"},
			search(func(s *app.Search) {
				s.Sources, s.ContactEmail, s.SerpAPIKey, s.OpenAlexKey, s.StrategyCheckpoint = []string{"crossref", "pubmed"}, "env@example.org", "k1", "ok1", &f
				s.BaseURLs = map[string]string{"arxiv": "http://127.0.0.1:1/", "pubmed": "http://x/"}
			}), ""},
		{"LLMFromEnv", map[string]string{"QUARRY_LLM_PROVIDER": "openai", "QUARRY_LLM_MODEL": "m1", "OPENAI_API_KEY": "sk-test"},
			search(func(s *app.Search) { s.LLM = openai }), ""},
		{"LLMFromFile", map[string]string{"QUARRY_CONFIG": withLLM}, search(func(s *app.Search) { s.Sources, s.LLM = []string{"arxiv"}, fromFile }), ""},
		{"LLMEnvOverridesFile", map[string]string{"QUARRY_CONFIG": withLLM, "QUARRY_LLM_MODEL": "llama3.1",
			"QUARRY_LLM_API_KEY": "sk-env", "QUARRY_LLM_MAX_RETRIES": "4", "OPENAI_API_KEY": "sk-vendor"},
			search(func(s *app.Search) { s.Sources, s.LLM = []string{"arxiv"}, fileThenEnv }), ""},
		{"LLMUnknownProviderInFile", map[string]string{"QUARRY_CONFIG": gemini}, app.Search{}, "llm.provider"},
		{"LLMUnknownKeyInFile", map[string]string{"QUARRY_CONFIG": llmTypo}, app.Search{}, "QUARRY_CONFIG"},
		{"MissingFile", map[string]string{"QUARRY_CONFIG": filepath.Join(dir, "nope.json")}, app.Search{}, "QUARRY_CONFIG"},
		{"UnknownKey", map[string]string{"QUARRY_CONFIG": bad}, app.Search{}, "QUARRY_CONFIG"},
		{"NotJSON", map[string]string{"QUARRY_CONFIG": notJSON}, app.Search{}, "QUARRY_CONFIG"},
		{"BadBool", map[string]string{"QUARRY_STRATEGY_CHECKPOINT": "maybe"}, app.Search{}, "QUARRY_STRATEGY_CHECKPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := load(t, tt.env)
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				require.Contains(t, err.Error(), tt.wantField, "the message names the field to fix")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.Search)
		})
	}
	_, err := load(t, map[string]string{"QUARRY_CONFIG": bad})
	require.ErrorContains(t, err, `unknown key "sourcez"`, "the unknown key is named")
}

// TestLoadLLM covers the LLM settings from the environment alone (the
// vendors' key variables as fallbacks, defaults per provider).
func TestLoadLLM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		want      llm.Config
		wantCode  string
		wantField string
	}{
		{name: "Unset", env: nil,
			want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "OpenAIKeyFallback", env: map[string]string{"QUARRY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-o", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "AnthropicKeyFallback", env: map[string]string{"QUARRY_LLM_PROVIDER": "Anthropic", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: llm.Config{Provider: "anthropic", Model: llm.DefaultAnthropicModel, APIKey: "sk-a", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "QuarryKeyWins", env: map[string]string{"QUARRY_LLM_PROVIDER": "openai", "QUARRY_LLM_API_KEY": "sk-q", "OPENAI_API_KEY": "sk-o"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-q", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "Ollama", env: map[string]string{"QUARRY_LLM_PROVIDER": "openai", "QUARRY_LLM_MODEL": "qwen2.5:7b", "QUARRY_LLM_BASE_URL": "http://localhost:11434/v1", "QUARRY_LLM_TIMEOUT": "3m", "QUARRY_LLM_MAX_RETRIES": "0"},
			want: llm.Config{Provider: "openai", Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1", Timeout: 3 * time.Minute, MaxRetries: 0, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "NoBudget", env: map[string]string{"QUARRY_LLM_RUN_TOKEN_BUDGET": "0"},
			want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "Budget", env: map[string]string{"QUARRY_LLM_RUN_TOKEN_BUDGET": "50000"},
			want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: 50000}},
		{name: "BadBudget", env: map[string]string{"QUARRY_LLM_RUN_TOKEN_BUDGET": "-1"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_RUN_TOKEN_BUDGET"},
		{name: "BadTimeout", env: map[string]string{"QUARRY_LLM_TIMEOUT": "soon"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_TIMEOUT"},
		{name: "BadRetries", env: map[string]string{"QUARRY_LLM_MAX_RETRIES": "-2"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_MAX_RETRIES"},
		{name: "UnknownProvider", env: map[string]string{"QUARRY_LLM_PROVIDER": "gemini"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_PROVIDER"},
		{name: "BadBaseURL", env: map[string]string{"QUARRY_LLM_BASE_URL": "localhost:8080"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := load(t, tt.env)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "err: %v", err)
			if tt.wantField != "" {
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
			}
			if tt.wantCode == "" {
				require.Equal(t, tt.want, cfg.Search.LLM)
			}
		})
	}
}

// TestLoadLLMFileAndEnv checks the file/environment layering of the llm
// object: the environment wins key by key, the vendors' key variables
// come after the file's api_key, and a bad value is reported under the
// name of the place it came from.
func TestLoadLLMFileAndEnv(t *testing.T) {
	t.Parallel()
	ollama := `{"provider":"OpenAI","model":"qwen2.5:7b","base_url":"http://localhost:11434/v1","api_key":"sk-file","timeout":"3m","max_retries":0}`
	tests := []struct {
		name      string
		file      string // the llm object
		env       map[string]string
		want      llm.Config
		wantField string
	}{
		{name: "Empty", file: `{}`, want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "FileOnly", file: ollama,
			want: llm.Config{Provider: "openai", Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1", APIKey: "sk-file", Timeout: 3 * time.Minute, MaxRetries: 0, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "FileDefaults", file: `{"provider":"anthropic","api_key":"sk-file"}`,
			want: llm.Config{Provider: "anthropic", Model: llm.DefaultAnthropicModel, APIKey: "sk-file", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "EnvOverridesKeyByKey", file: ollama,
			env:  map[string]string{"QUARRY_LLM_MODEL": "llama3.1", "QUARRY_LLM_API_KEY": "sk-env", "QUARRY_LLM_MAX_RETRIES": "5"},
			want: llm.Config{Provider: "openai", Model: "llama3.1", BaseURL: "http://localhost:11434/v1", APIKey: "sk-env", Timeout: 3 * time.Minute, MaxRetries: 5, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "EnvProviderOverridesFile", file: `{"provider":"anthropic","max_retries":3}`,
			env:  map[string]string{"QUARRY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-o", Timeout: llm.DefaultTimeout, MaxRetries: 3, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "FileKeyBeforeVendorKey", file: `{"provider":"openai","api_key":"sk-file"}`,
			env:  map[string]string{"OPENAI_API_KEY": "sk-o"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-file", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "UnknownProviderInFile", file: `{"provider":"gemini"}`, wantField: "llm.provider"},
		{name: "UnknownProviderInFileHiddenByEnv", file: `{"provider":"gemini"}`, env: map[string]string{"QUARRY_LLM_PROVIDER": "offline"},
			want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries, RunTokenBudget: llm.DefaultRunTokenBudget}},
		{name: "BadTimeoutInFile", file: `{"timeout":"90"}`, wantField: "llm.timeout"},
		{name: "BadRetriesInFile", file: `{"max_retries":11}`, wantField: "llm.max_retries"},
		{name: "BadBaseURLInFile", file: `{"provider":"openai","base_url":"ftp://x"}`, wantField: "llm.base_url"},
		{name: "BadEnvOverFile", file: ollama, env: map[string]string{"QUARRY_LLM_TIMEOUT": "-1s"}, wantField: "QUARRY_LLM_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"QUARRY_CONFIG": configFile(t, `{"llm":`+tt.file+`}`)}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := load(t, env)
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "err: %v", err)
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				require.Contains(t, err.Error(), tt.wantField, "the message names the field to fix")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.Search.LLM)
		})
	}
}

// TestConfigFileLLMBuildsProvider follows LLM settings from the file to a
// built workflow, and checks that the resolved configuration does not echo
// the key when serialised.
func TestConfigFileLLMBuildsProvider(t *testing.T) {
	t.Parallel()
	file := configFile(t, `{"sources":["arxiv"],"llm":{"provider":"anthropic","api_key":"sk-secret"}}`)
	cfg, err := load(t, map[string]string{"QUARRY_CONFIG": file})
	require.NoError(t, err)
	require.Equal(t, llm.ProviderAnthropic, cfg.Search.LLM.Provider)
	require.Equal(t, llm.DefaultAnthropicModel, cfg.Search.LLM.Model)
	_, err = app.NewSearch(cfg.Search, nil, nil)
	require.NoError(t, err, "the file's key is enough for a hosted provider")
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NotContains(t, string(b), "sk-secret")
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var text, js strings.Builder
	app.NewLogger(app.Config{}, &text).Info("started", "addr", "127.0.0.1:0")
	app.NewLogger(app.Config{}, &text).Debug("hidden at the default level")
	require.Contains(t, text.String(), `level=INFO msg=started addr=127.0.0.1:0`)
	require.NotContains(t, text.String(), "hidden")

	cfg, err := load(t, map[string]string{"QUARRY_LOG_FORMAT": "json", "QUARRY_LOG_LEVEL": "warn"})
	require.NoError(t, err)
	logger := app.NewLogger(cfg, &js)
	logger.Info("not shown")
	logger.Warn("shown", "n", 1)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(js.String()), &line), "one JSON object: %s", js.String())
	require.Equal(t, "shown", line["msg"])
	require.Equal(t, "WARN", line["level"])
}

var update = flag.Bool("update", false, "rewrite README.md's settings table from the settings")

// TestREADMESettingsTable keeps README.md's table of settings the same as
// the settings the code reads; go test ./internal/app -run
// TestREADMESettingsTable -update rewrites it.
func TestREADMESettingsTable(t *testing.T) {
	t.Parallel()
	const (
		path  = "../../README.md"
		begin = "<!-- settings table: generated from internal/app/settings.go; go test ./internal/app -run TestREADMESettingsTable -update rewrites it -->\n"
		end   = "<!-- end of settings table -->\n"
	)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	readme := string(b)
	before, rest, ok := strings.Cut(readme, begin)
	require.True(t, ok, "README.md has no line %q", begin)
	table, after, ok := strings.Cut(rest, end)
	require.True(t, ok, "README.md has no line %q", end)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(before+begin+app.SettingsTable()+end+after), 0o644))
		return
	}
	require.Equal(t, app.SettingsTable(), table, "README.md's settings table is out of date; run go test ./internal/app -run TestREADMESettingsTable -update")
}

// TestLoadJobRescueAfter: QUARRY_JOB_RESCUE_AFTER sets how long a job
// may run before River takes it for abandoned (unset: the store's
// default, shown in the settings table); a value outside 1s–24h is
// refused naming the variable.
func TestLoadJobRescueAfter(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	require.NoError(t, err)
	require.Zero(t, cfg.JobRescueAfter)
	require.Contains(t, app.SettingsTable(), "`"+store.DefaultRescueAfter.String()+"`")
	cfg, err = load(t, map[string]string{"QUARRY_JOB_RESCUE_AFTER": "5s"})
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, cfg.JobRescueAfter)
	for _, bad := range []string{"soon", "0s", "500ms", "25h"} {
		_, err = load(t, map[string]string{"QUARRY_JOB_RESCUE_AFTER": bad})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), bad)
		require.Contains(t, fault.ErrorFields(err), "QUARRY_JOB_RESCUE_AFTER", bad)
	}
}

// TestLoadSourceDeadline: QUARRY_SOURCE_DEADLINE sets the deadline of
// each source's queries in a search (unset: the searcher's default); a
// value that is not a positive duration is refused naming the variable.
func TestLoadSourceDeadline(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	require.NoError(t, err)
	require.Zero(t, cfg.Search.SourceDeadline)
	require.Contains(t, app.SettingsTable(), "`"+searcher.DefaultSourceDeadline.String()+"`")
	cfg, err = load(t, map[string]string{"QUARRY_SOURCE_DEADLINE": "45s"})
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, cfg.Search.SourceDeadline)
	cfg, err = app.Load(app.Flags{"source-deadline": "5s"}, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, cfg.Search.SourceDeadline, "--source-deadline")
	for _, bad := range []string{"soon", "0s", "-1s"} {
		_, err = load(t, map[string]string{"QUARRY_SOURCE_DEADLINE": bad})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), bad)
		require.Contains(t, fault.ErrorFields(err), "QUARRY_SOURCE_DEADLINE", bad)
	}
}

// TestLoadExclusionReasons: QUARRY_EXCLUSION_REASONS (a list in the file)
// sets the reasons the review offers, blanks and repeats dropped; unset it
// is the usual list; an empty list, too many or too long a reason is
// refused naming the setting.
func TestLoadExclusionReasons(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	require.NoError(t, err)
	require.Equal(t, research.DefaultExclusionReasons(), cfg.ExclusionReasons)
	require.Equal(t, []string{"population", "intervention", "comparator", "outcome", "study design", "language", "duplicate", "other"}, cfg.ExclusionReasons)
	cfg, err = load(t, map[string]string{"QUARRY_EXCLUSION_REASONS": " wrong species, wrong dose,,wrong species , preprint"})
	require.NoError(t, err)
	require.Equal(t, []string{"wrong species", "wrong dose", "preprint"}, cfg.ExclusionReasons)
	cfg, err = load(t, map[string]string{"QUARRY_CONFIG": configFile(t, `{"exclusion_reasons":["animal study","review"]}`)})
	require.NoError(t, err)
	require.Equal(t, []string{"animal study", "review"}, cfg.ExclusionReasons)
	_, err = load(t, map[string]string{"QUARRY_EXCLUSION_REASONS": " , "})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "QUARRY_EXCLUSION_REASONS")
	many := make([]string, app.MaxExclusionReasons+1)
	for i := range many {
		many[i] = "r" + strconv.Itoa(i)
	}
	_, err = load(t, map[string]string{"QUARRY_EXCLUSION_REASONS": strings.Join(many, ",")})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "exclusion_reasons")
	_, err = load(t, map[string]string{"QUARRY_EXCLUSION_REASONS": "ok," + strings.Repeat("x", research.MaxMarkReason+1)})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "exclusion_reasons[1]")
}

// TestLoadStopWindow: QUARRY_STOP_WINDOW sets k of the review's "no
// relevant paper in the last k screened" suggestion, 50 by default; a
// value that is not a positive whole number is refused naming the
// variable, and a Config built in code with a negative k is invalid.
func TestLoadStopWindow(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, nil)
	require.NoError(t, err)
	require.Equal(t, research.DefaultStopWindow, cfg.StopWindow)
	cfg, err = load(t, map[string]string{"QUARRY_STOP_WINDOW": "100"})
	require.NoError(t, err)
	require.Equal(t, 100, cfg.StopWindow)
	for _, bad := range []string{"many", "0", "-5", "2.5"} {
		_, err = load(t, map[string]string{"QUARRY_STOP_WINDOW": bad})
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), bad)
		require.Contains(t, fault.ErrorFields(err), "QUARRY_STOP_WINDOW", bad)
	}
	err = app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: "q.db", StopWindow: -1}.Validate()
	require.Contains(t, fault.ErrorFields(err), "stop_window")
}

// TestWebhookSecretsFile: the secrets file's NAME=value lines become
// Config.WebhookSecrets, never serialised; a bad line is named by its
// number, never by its value.
func TestWebhookSecretsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "secrets")
	require.NoError(t, os.WriteFile(good, []byte("# chat\nHOOK_TOKEN = s3cret=with=equals\n\nother_2=x\n"), 0o600))
	cfg, err := load(t, map[string]string{"QUARRY_WEBHOOK_SECRETS_FILE": good})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"HOOK_TOKEN": "s3cret=with=equals", "other_2": "x"}, cfg.WebhookSecrets)
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NotContains(t, string(b), "s3cret")

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("OK=1\n2BAD=hidden-value\n"), 0o600))
	_, err = load(t, map[string]string{"QUARRY_WEBHOOK_SECRETS_FILE": bad})
	require.Error(t, err)
	require.Contains(t, err.Error(), bad+":2")
	require.NotContains(t, err.Error(), "hidden-value")
}

// TestLoadRunLimits: QUARRY_MAX_ACTIVE_RUNS and QUARRY_WORKFLOW_LIMITS
// reach the configuration (store.RunLimits is built from them).
func TestLoadRunLimits(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{"QUARRY_MAX_ACTIVE_RUNS": "6", "QUARRY_WORKFLOW_LIMITS": " screening=2, search=4 ,"})
	require.NoError(t, err)
	require.Equal(t, 6, cfg.MaxActiveRuns)
	require.Equal(t, map[string]int{"screening": 2, "search": 4}, cfg.WorkflowLimits)
}

// TestLoadEmbed covers the embeddings settings: offline by default, from
// the environment and the file's embed object (the environment wins key by
// key), OPENAI_API_KEY as the fallback key, and problems found at start-up
// under the name of the place they came from; the key is never serialised.
func TestLoadEmbed(t *testing.T) {
	t.Parallel()
	ollama := `{"embed":{"provider":"openai","model":"nomic-embed-text","base_url":"http://localhost:11434/v1","timeout":"2m","max_retries":1}}`
	tests := []struct {
		name      string
		env       map[string]string
		file      string
		want      embed.Config
		wantField string
	}{
		{name: "Unset", want: offlineEmbed},
		{name: "FromEnv", env: map[string]string{"QUARRY_EMBED_PROVIDER": "OpenAI", "QUARRY_EMBED_MODEL": "m", "QUARRY_EMBED_API_KEY": "sk-e", "OPENAI_API_KEY": "sk-o"},
			want: embed.Config{Provider: "openai", Model: "m", APIKey: "sk-e", Timeout: embed.DefaultTimeout, MaxRetries: embed.DefaultMaxRetries}},
		{name: "VendorKeyFallback", env: map[string]string{"QUARRY_EMBED_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o"},
			want: embed.Config{Provider: "openai", APIKey: "sk-o", Timeout: embed.DefaultTimeout, MaxRetries: embed.DefaultMaxRetries}},
		{name: "FromFile", file: ollama,
			want: embed.Config{Provider: "openai", Model: "nomic-embed-text", BaseURL: "http://localhost:11434/v1", Timeout: 2 * time.Minute, MaxRetries: 1}},
		{name: "EnvOverridesFile", file: ollama, env: map[string]string{"QUARRY_EMBED_MODEL": "bge-m3"},
			want: embed.Config{Provider: "openai", Model: "bge-m3", BaseURL: "http://localhost:11434/v1", Timeout: 2 * time.Minute, MaxRetries: 1}},
		{name: "UnknownProvider", env: map[string]string{"QUARRY_EMBED_PROVIDER": "cohere"}, wantField: "QUARRY_EMBED_PROVIDER"},
		{name: "UnknownProviderInFile", file: `{"embed":{"provider":"cohere"}}`, wantField: "embed.provider"},
		{name: "BadBaseURL", env: map[string]string{"QUARRY_EMBED_BASE_URL": "localhost:1"}, wantField: "QUARRY_EMBED_BASE_URL"},
		{name: "BadRetries", env: map[string]string{"QUARRY_EMBED_MAX_RETRIES": "11"}, wantField: "QUARRY_EMBED_MAX_RETRIES"},
		{name: "OpenAIWithoutKey", env: map[string]string{"QUARRY_EMBED_PROVIDER": "openai"}, wantField: "embed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			if tt.file != "" {
				env["QUARRY_CONFIG"] = configFile(t, tt.file)
			}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := load(t, env)
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "err: %v", err)
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.Search.Embed)
			b, err := json.Marshal(cfg)
			require.NoError(t, err)
			require.NotContains(t, string(b), "sk-")
		})
	}
}
