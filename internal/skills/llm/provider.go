// Package llm connects Quarry to large language models: a small Provider
// interface with OpenAI-compatible and Anthropic implementations, and
// LLM-backed variants of the intent parser, query builder and relevance
// scorer. Every variant wraps an offline skill and falls back to it, with a
// skills.Note, whenever the model errors or answers something that fails
// validation twice, so a flaky or absent model never stops a search.
package llm

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quarry/internal/engine"
)

// Provider names accepted in Config.Provider and QUARRY_LLM_PROVIDER.
const (
	ProviderOffline   = "offline"   // no model: the offline skills are used as they are
	ProviderOpenAI    = "openai"    // OpenAI or any server speaking its chat completions API
	ProviderAnthropic = "anthropic" // Anthropic's messages API
)

// Default models, chosen as small, fast models of each vendor, because the
// skills send many short structured requests rather than a few long ones.
const (
	DefaultOpenAIModel    = "gpt-5.4-mini"
	DefaultAnthropicModel = "claude-haiku-4-5"
)

// Default base URLs; any other OpenAI base URL (Ollama, vLLM, llama.cpp,
// OpenRouter) is a self-hosted or third-party endpoint where an API key may
// not be needed.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1/"
	DefaultAnthropicBaseURL = "https://api.anthropic.com/"
)

// DefaultTimeout bounds one request attempt when Config.Timeout is zero:
// long enough for a model to write a batch of scores, short enough that a
// hung server falls back within a step rather than stalling the run.
const DefaultTimeout = 90 * time.Second

// DefaultMaxRetries is what ConfigFromEnv uses when QUARRY_LLM_MAX_RETRIES is
// unset: the SDKs' own default, which rides out a rate limit or a 5xx blip.
const DefaultMaxRetries = 2

// DefaultMaxTokens caps an answer when Request.MaxTokens is zero; Anthropic
// requires a cap, and the skills' JSON answers fit well within it.
const DefaultMaxTokens = 4096

// Request is one completion: a system prompt, one user prompt, and limits.
// It is deliberately single-turn because every skill asks one question and
// validates one answer.
type Request struct {
	System string
	Prompt string
	// MaxTokens caps the answer; zero means DefaultMaxTokens.
	MaxTokens int
	// Temperature is sent only when it is above zero: several models
	// (reasoning models in particular) reject any value but their default.
	Temperature float64
	// JSON asks for a single JSON object as the answer, through the API's
	// JSON mode where there is one (OpenAI's response_format json_object)
	// and through the instructions otherwise (Anthropic).
	JSON bool
}

// Provider completes a prompt with a language model. Implementations retry
// transient HTTP failures themselves (Config.MaxRetries); an error from
// Complete means the model could not answer at all.
type Provider interface {
	// Name says which vendor and model answered, for notes and logs.
	Name() string
	Complete(ctx context.Context, r Request) (string, error)
}

// Config selects and configures a provider. It is plain data so that the
// application can build it from the environment (ConfigFromEnv), a settings
// page or a test.
type Config struct {
	Provider string        `json:"provider"`
	Model    string        `json:"model"`
	BaseURL  string        `json:"base_url"`
	APIKey   string        `json:"-"` // never serialised: it is a secret
	Timeout  time.Duration `json:"timeout"`
	// MaxRetries is how often the SDK retries a failed request (429, 5xx,
	// connection errors) before giving up; zero means no retries.
	MaxRetries int `json:"max_retries"`
}

// New returns the provider cfg describes. For ProviderOffline (or an empty
// provider) it returns (nil, nil): there is no model, and the LLM skill
// constructors then return their offline fallback unchanged. A hosted
// provider without an API key is engine.EInvalid naming the variable to set,
// so a misconfiguration is reported at start-up rather than as a fallback
// on every step.
func New(cfg Config) (Provider, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if name == "" || name == ProviderOffline {
		return nil, nil
	}
	if name != ProviderOpenAI && name != ProviderAnthropic {
		return nil, engine.Errorf(engine.EInvalid, "unknown LLM provider %q; valid providers are %s, %s and %s",
			cfg.Provider, ProviderOffline, ProviderOpenAI, ProviderAnthropic)
	}
	if cfg.MaxRetries < 0 {
		return nil, engine.Errorf(engine.EInvalid, "LLM max retries must not be negative (got %d)", cfg.MaxRetries)
	}
	if cfg.Timeout < 0 {
		return nil, engine.Errorf(engine.EInvalid, "LLM timeout must not be negative (got %s)", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.Provider = name
	cfg.APIKey = strings.TrimSpace(cfg.APIKey)
	cfg.Model = strings.TrimSpace(cfg.Model)
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	official, keyVar := DefaultOpenAIBaseURL, "QUARRY_LLM_API_KEY or OPENAI_API_KEY"
	if name == ProviderAnthropic {
		official, keyVar = DefaultAnthropicBaseURL, "QUARRY_LLM_API_KEY or ANTHROPIC_API_KEY"
	}
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
		if name == ProviderAnthropic {
			cfg.Model = DefaultAnthropicModel
		}
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = official
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, engine.Errorf(engine.EInvalid, "LLM base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	// The Anthropic SDK refuses to send a request without credentials (and
	// would otherwise go looking for them in the environment and a profile
	// file), so it always needs a key; an OpenAI-compatible self-hosted
	// server (Ollama, llama.cpp) usually needs none.
	if cfg.APIKey == "" && (name == ProviderAnthropic || isOfficialHost(u, official)) {
		return nil, engine.Errorf(engine.EInvalid, "the %s provider needs an API key; set %s", name, keyVar)
	}
	if name == ProviderAnthropic {
		return newAnthropic(cfg), nil
	}
	return newOpenAI(cfg), nil
}

// isOfficialHost reports whether u points at the vendor's own API, where a
// key is always required; self-hosted servers often need none.
func isOfficialHost(u *url.URL, official string) bool {
	o, _ := url.Parse(official) // a constant: cannot fail
	return strings.EqualFold(u.Hostname(), o.Hostname())
}

// ConfigFromEnv reads the LLM configuration from the environment through
// getenv (os.Getenv in main, a map in tests, so nothing reads globals):
//
//	QUARRY_LLM_PROVIDER     offline (default), openai or anthropic
//	QUARRY_LLM_MODEL        default DefaultOpenAIModel / DefaultAnthropicModel
//	QUARRY_LLM_BASE_URL     e.g. http://localhost:11434/v1 for Ollama
//	QUARRY_LLM_API_KEY      falling back to OPENAI_API_KEY / ANTHROPIC_API_KEY
//	QUARRY_LLM_TIMEOUT      per request attempt, a Go duration (default 90s)
//	QUARRY_LLM_MAX_RETRIES  SDK retries per request (default 2)
//
// Malformed timeout or retry values are engine.EInvalid. Whether the
// configuration is complete (a key for a hosted provider) is New's to check.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	cfg := Config{
		Provider:   strings.ToLower(get("QUARRY_LLM_PROVIDER")),
		Model:      get("QUARRY_LLM_MODEL"),
		BaseURL:    get("QUARRY_LLM_BASE_URL"),
		APIKey:     get("QUARRY_LLM_API_KEY"),
		Timeout:    DefaultTimeout,
		MaxRetries: DefaultMaxRetries,
	}
	if cfg.Provider == "" {
		cfg.Provider = ProviderOffline
	}
	if cfg.APIKey == "" {
		switch cfg.Provider {
		case ProviderOpenAI:
			cfg.APIKey = get("OPENAI_API_KEY")
		case ProviderAnthropic:
			cfg.APIKey = get("ANTHROPIC_API_KEY")
		}
	}
	if cfg.Model == "" {
		switch cfg.Provider {
		case ProviderOpenAI:
			cfg.Model = DefaultOpenAIModel
		case ProviderAnthropic:
			cfg.Model = DefaultAnthropicModel
		}
	}
	if s := get("QUARRY_LLM_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return Config{}, engine.Errorf(engine.EInvalid, "QUARRY_LLM_TIMEOUT %q is not a positive duration such as 90s", s)
		}
		cfg.Timeout = d
	}
	if s := get("QUARRY_LLM_MAX_RETRIES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 10 {
			return Config{}, engine.Errorf(engine.EInvalid, "QUARRY_LLM_MAX_RETRIES %q is not a whole number between 0 and 10", s)
		}
		cfg.MaxRetries = n
	}
	return cfg, nil
}

// maxTokens returns r's token cap, defaulted.
func (r Request) maxTokens() int64 {
	if r.MaxTokens > 0 {
		return int64(r.MaxTokens)
	}
	return DefaultMaxTokens
}

// jsonInstruction is appended to the system prompt of JSON requests: OpenAI's
// JSON mode requires the word JSON in the messages, and Anthropic has no
// JSON mode, so the instruction is what asks for it.
const jsonInstruction = "Answer with a single JSON object and nothing else: no prose, no Markdown code fences."

func systemPrompt(r Request) string {
	if !r.JSON {
		return r.System
	}
	if r.System == "" {
		return jsonInstruction
	}
	return r.System + "\n\n" + jsonInstruction
}

// providerError wraps an SDK error so that callers see which provider failed
// without the SDK's types leaking out of this package.
func providerError(name string, err error) error {
	return &engine.Error{Code: engine.EInternal, Message: fmt.Sprintf("LLM %s failed", name), Err: err}
}
