package llm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/skills/llm"
)

func TestProviderWireFormat(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, kind, answer("intent_valid.json"))
			p := f.provider()
			got, err := p.Complete(context.Background(), llm.Request{System: "Be brief.", Prompt: "hello", MaxTokens: 300, Temperature: 0.3, JSON: true})
			require.NoError(t, err)
			require.Equal(t, string(readTestdata(t, "answers/intent_valid.json")), got)
			require.Equal(t, kind+"/"+testModel, p.Name())

			reqs := f.requests()
			require.Len(t, reqs, 1)
			r := reqs[0]
			require.Equal(t, testModel, r.Body["model"])
			require.Equal(t, "hello", userPrompt(t, r.Body))
			sys := systemPrompt(t, kind, r.Body)
			require.Contains(t, sys, "Be brief.")
			require.Contains(t, sys, "JSON object")
			require.InDelta(t, 0.3, r.Body["temperature"], 1e-9)
			switch kind {
			case llm.ProviderOpenAI:
				require.Equal(t, "/v1/chat/completions", r.Path)
				require.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
				require.Equal(t, map[string]any{"type": "json_object"}, r.Body["response_format"])
				// a self-hosted server gets max_tokens, which they all understand
				require.InDelta(t, 300, r.Body["max_tokens"], 0)
			case llm.ProviderAnthropic:
				require.Equal(t, "/v1/messages", r.Path)
				require.Equal(t, testKey, r.Header.Get("X-Api-Key"))
				require.NotEmpty(t, r.Header.Get("Anthropic-Version"))
				require.Empty(t, r.Header.Get("Authorization"))
				require.InDelta(t, 300, r.Body["max_tokens"], 0)
			}
		})
	}
}

func TestProviderDefaultsOmitTemperature(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, kind, answer("not_json.txt"))
			got, err := f.provider().Complete(context.Background(), llm.Request{Prompt: "hi"})
			require.NoError(t, err)
			require.Contains(t, got, "Sure!")
			body := f.requests()[0].Body
			require.NotContains(t, body, "temperature", "reasoning models reject a temperature; zero must mean unset")
			require.NotContains(t, body, "response_format")
			require.InDelta(t, llm.DefaultMaxTokens, body["max_tokens"], 0)
		})
	}
}

func TestProviderRetriesTransientErrors(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		for _, status := range []int{500, 429} {
			t.Run(kind+"/"+fmt.Sprint(status), func(t *testing.T) {
				t.Parallel()
				f := newFake(t, kind, failWith(status), answer("intent_valid.json"))
				got, err := f.provider(func(c *llm.Config) { c.MaxRetries = 1 }).Complete(context.Background(), llm.Request{Prompt: "x"})
				require.NoError(t, err)
				require.Contains(t, got, "mindfulness")
				require.Len(t, f.requests(), 2)
			})
		}
	}
}

func TestProviderErrorIsInternal(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, kind, failWith(500))
			_, err := f.provider().Complete(context.Background(), llm.Request{Prompt: "x"})
			require.Error(t, err)
			require.Equal(t, fault.EInternal, fault.ErrorCode(err))
			require.Contains(t, err.Error(), kind+"/"+testModel)
			require.NotContains(t, err.Error(), testKey)
			require.Len(t, f.requests(), 1, "MaxRetries 0 means one attempt")
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      llm.Config
		wantNil  bool
		wantCode string
		wantMsg  string
		wantName string
	}{
		{name: "Offline", cfg: llm.Config{Provider: "offline"}, wantNil: true},
		{name: "Empty", cfg: llm.Config{}, wantNil: true},
		{name: "Unknown", cfg: llm.Config{Provider: "gemini"}, wantCode: fault.EInvalid, wantMsg: "offline, openai and anthropic"},
		{name: "OpenAINoKey", cfg: llm.Config{Provider: "openai"}, wantCode: fault.EInvalid, wantMsg: "OPENAI_API_KEY"},
		{name: "AnthropicNoKey", cfg: llm.Config{Provider: "anthropic"}, wantCode: fault.EInvalid, wantMsg: "ANTHROPIC_API_KEY"},
		{name: "OfficialURLNoKey", cfg: llm.Config{Provider: "openai", BaseURL: "https://api.openai.com/v1"}, wantCode: fault.EInvalid, wantMsg: "QUARRY_LLM_API_KEY"},
		{name: "OllamaNeedsNoKey", cfg: llm.Config{Provider: "openai", BaseURL: "http://localhost:11434/v1", Model: "llama3.1"}, wantName: "openai/llama3.1"},
		{name: "DefaultOpenAIModel", cfg: llm.Config{Provider: "OpenAI", APIKey: "k"}, wantName: "openai/" + llm.DefaultOpenAIModel},
		{name: "DefaultAnthropicModel", cfg: llm.Config{Provider: "anthropic", APIKey: "k"}, wantName: "anthropic/" + llm.DefaultAnthropicModel},
		{name: "NegativeRetries", cfg: llm.Config{Provider: "openai", APIKey: "k", MaxRetries: -1}, wantCode: fault.EInvalid, wantMsg: "retries"},
		{name: "NegativeTimeout", cfg: llm.Config{Provider: "openai", APIKey: "k", Timeout: -time.Second}, wantCode: fault.EInvalid, wantMsg: "timeout"},
		{name: "BadBaseURL", cfg: llm.Config{Provider: "anthropic", APIKey: "k", BaseURL: "localhost:8080"}, wantCode: fault.EInvalid, wantMsg: "base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := llm.New(tt.cfg)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "err: %v", err)
			if tt.wantMsg != "" {
				require.Contains(t, err.Error(), tt.wantMsg)
			}
			if tt.wantNil || tt.wantCode != "" {
				require.Nil(t, p)
				return
			}
			require.Equal(t, tt.wantName, p.Name())
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		want      llm.Config
		wantCode  string
		wantField string
	}{
		{name: "Unset", env: nil,
			want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "OpenAIKeyFallback", env: map[string]string{"QUARRY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-o", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "AnthropicKeyFallback", env: map[string]string{"QUARRY_LLM_PROVIDER": "Anthropic", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: llm.Config{Provider: "anthropic", Model: llm.DefaultAnthropicModel, APIKey: "sk-a", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "QuarryKeyWins", env: map[string]string{"QUARRY_LLM_PROVIDER": "openai", "QUARRY_LLM_API_KEY": "sk-q", "OPENAI_API_KEY": "sk-o"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-q", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "Ollama", env: map[string]string{"QUARRY_LLM_PROVIDER": "openai", "QUARRY_LLM_MODEL": "qwen2.5:7b", "QUARRY_LLM_BASE_URL": "http://localhost:11434/v1", "QUARRY_LLM_TIMEOUT": "3m", "QUARRY_LLM_MAX_RETRIES": "0"},
			want: llm.Config{Provider: "openai", Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1", Timeout: 3 * time.Minute, MaxRetries: 0}},
		{name: "BadTimeout", env: map[string]string{"QUARRY_LLM_TIMEOUT": "soon"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_TIMEOUT"},
		{name: "BadRetries", env: map[string]string{"QUARRY_LLM_MAX_RETRIES": "-2"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_MAX_RETRIES"},
		{name: "UnknownProvider", env: map[string]string{"QUARRY_LLM_PROVIDER": "gemini"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_PROVIDER"},
		{name: "BadBaseURL", env: map[string]string{"QUARRY_LLM_BASE_URL": "localhost:8080"}, wantCode: fault.EInvalid, wantField: "QUARRY_LLM_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := llm.ConfigFromEnv(func(k string) string { return tt.env[k] })
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "err: %v", err)
			if tt.wantField != "" {
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
			}
			if tt.wantCode == "" {
				require.Equal(t, tt.want, cfg)
			}
		})
	}
}

// TestConfigFrom checks the file/environment layering: the environment wins
// key by key, the vendors' key variables come after the file's api_key, and
// a bad value is reported under the name of the place it came from.
func TestConfigFrom(t *testing.T) {
	t.Parallel()
	zero, three := 0, 3
	ollama := llm.FileConfig{Provider: "OpenAI", Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1",
		APIKey: "sk-file", Timeout: "3m", MaxRetries: &zero}
	tests := []struct {
		name      string
		file      llm.FileConfig
		env       map[string]string
		want      llm.Config
		wantField string
	}{
		{name: "Empty", want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "FileOnly", file: ollama,
			want: llm.Config{Provider: "openai", Model: "qwen2.5:7b", BaseURL: "http://localhost:11434/v1", APIKey: "sk-file", Timeout: 3 * time.Minute, MaxRetries: 0}},
		{name: "FileDefaults", file: llm.FileConfig{Provider: "anthropic", APIKey: "sk-file"},
			want: llm.Config{Provider: "anthropic", Model: llm.DefaultAnthropicModel, APIKey: "sk-file", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "EnvOverridesKeyByKey", file: ollama,
			env:  map[string]string{"QUARRY_LLM_MODEL": "llama3.1", "QUARRY_LLM_API_KEY": "sk-env", "QUARRY_LLM_MAX_RETRIES": "5"},
			want: llm.Config{Provider: "openai", Model: "llama3.1", BaseURL: "http://localhost:11434/v1", APIKey: "sk-env", Timeout: 3 * time.Minute, MaxRetries: 5}},
		{name: "EnvProviderOverridesFile", file: llm.FileConfig{Provider: "anthropic", MaxRetries: &three},
			env:  map[string]string{"QUARRY_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-o", Timeout: llm.DefaultTimeout, MaxRetries: 3}},
		{name: "FileKeyBeforeVendorKey", file: llm.FileConfig{Provider: "openai", APIKey: "sk-file"},
			env:  map[string]string{"OPENAI_API_KEY": "sk-o"},
			want: llm.Config{Provider: "openai", Model: llm.DefaultOpenAIModel, APIKey: "sk-file", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "UnknownProviderInFile", file: llm.FileConfig{Provider: "gemini"}, wantField: "llm.provider"},
		{name: "UnknownProviderInFileHiddenByEnv", file: llm.FileConfig{Provider: "gemini"}, env: map[string]string{"QUARRY_LLM_PROVIDER": "offline"},
			want: llm.Config{Provider: "offline", Timeout: llm.DefaultTimeout, MaxRetries: llm.DefaultMaxRetries}},
		{name: "BadTimeoutInFile", file: llm.FileConfig{Timeout: "90"}, wantField: "llm.timeout"},
		{name: "BadRetriesInFile", file: llm.FileConfig{MaxRetries: func() *int { n := 11; return &n }()}, wantField: "llm.max_retries"},
		{name: "BadBaseURLInFile", file: llm.FileConfig{Provider: "openai", BaseURL: "ftp://x"}, wantField: "llm.base_url"},
		{name: "BadEnvOverFile", file: ollama, env: map[string]string{"QUARRY_LLM_TIMEOUT": "-1s"}, wantField: "QUARRY_LLM_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := llm.ConfigFrom(tt.file, func(k string) string { return tt.env[k] })
			if tt.wantField != "" {
				require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "err: %v", err)
				require.Contains(t, fault.ErrorFields(err), tt.wantField)
				require.Contains(t, err.Error(), tt.wantField, "the message names the field to fix")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg)
		})
	}
}

func TestProviderSelfHostedWithoutKey(t *testing.T) {
	t.Parallel()
	f := newFake(t, llm.ProviderOpenAI, answer("intent_valid.json"))
	p := f.provider(func(c *llm.Config) { c.APIKey = "" })
	_, err := p.Complete(context.Background(), llm.Request{Prompt: "x"})
	require.NoError(t, err)
	require.Empty(t, f.requests()[0].Header.Get("Authorization"), "no key configured means none is sent")

	// The Anthropic SDK cannot send a request without credentials, so a
	// custom Anthropic base URL still needs a key, reported at start-up.
	_, err = llm.New(llm.Config{Provider: llm.ProviderAnthropic, BaseURL: f.srv.URL})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "ANTHROPIC_API_KEY")
}
