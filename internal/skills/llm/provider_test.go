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

func TestCheckProvider(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"offline", "openai", "Anthropic", " openai "} {
		require.NoError(t, llm.CheckProvider(ok), ok)
	}
	err := llm.CheckProvider("gemini")
	require.EqualError(t, err, `unknown LLM provider "gemini"; valid providers are offline, openai and anthropic`)
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
