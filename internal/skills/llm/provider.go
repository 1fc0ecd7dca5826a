// Package llm connects Quarry to large language models: a small Provider
// interface with OpenAI-compatible and Anthropic implementations, and
// LLM-backed variants of the intent parser, query builder and relevance
// scorer. Every variant wraps an offline skill and falls back to it, with a
// research.Note, whenever the model errors or answers something that fails
// validation twice, so a flaky or absent model never stops a search.
package llm

import (
	"context"
	"fmt"
	"net/url"
	"quarry/internal/fault"
	"strconv"
	"strings"
	"time"
)

// Provider names accepted in Config.Provider, QUARRY_LLM_PROVIDER and the
// configuration file's llm.provider.
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

// DefaultMaxRetries is what ConfigFrom uses when neither QUARRY_LLM_MAX_RETRIES
// nor the file's llm.max_retries is set: the SDKs' own default, which rides
// out a rate limit or a 5xx blip.
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
// application can build it from a configuration file and the environment
// (ConfigFrom), a settings page or a test. APIKey is never serialised, so a
// Config can be logged or shown as JSON without leaking the secret.
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
// provider without an API key is fault.EInvalid naming the variable to set,
// so a misconfiguration is reported at start-up rather than as a fallback
// on every step.
func New(cfg Config) (Provider, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if name == "" || name == ProviderOffline {
		return nil, nil
	}
	if !knownProvider(name) {
		return nil, fault.Errorf(fault.EInvalid, "%s", unknownProvider(cfg.Provider))
	}
	if cfg.MaxRetries < 0 {
		return nil, fault.Errorf(fault.EInvalid, "LLM max retries must not be negative (got %d)", cfg.MaxRetries)
	}
	if cfg.Timeout < 0 {
		return nil, fault.Errorf(fault.EInvalid, "LLM timeout must not be negative (got %s)", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.Provider = name
	cfg.APIKey = strings.TrimSpace(cfg.APIKey)
	cfg.Model = strings.TrimSpace(cfg.Model)
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	official, keyVar := DefaultOpenAIBaseURL, "QUARRY_LLM_API_KEY or OPENAI_API_KEY, or api_key in the QUARRY_CONFIG file's llm object"
	if name == ProviderAnthropic {
		official, keyVar = DefaultAnthropicBaseURL, "QUARRY_LLM_API_KEY or ANTHROPIC_API_KEY, or api_key in the QUARRY_CONFIG file's llm object"
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
	u, ok := parseHTTPURL(cfg.BaseURL)
	if !ok {
		return nil, fault.Errorf(fault.EInvalid, "LLM base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	// The Anthropic SDK refuses to send a request without credentials (and
	// would otherwise go looking for them in the environment and a profile
	// file), so it always needs a key; an OpenAI-compatible self-hosted
	// server (Ollama, llama.cpp) usually needs none.
	if cfg.APIKey == "" && (name == ProviderAnthropic || isOfficialHost(u, official)) {
		return nil, fault.Errorf(fault.EInvalid, "the %s provider needs an API key; set %s", name, keyVar)
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

// FileConfig is the "llm" object of the QUARRY_CONFIG file, in the file's
// snake_case keys. It is kept apart from Config because a file needs what
// Config cannot say: an absent key (so the environment can override the
// file key by key and defaults still apply), a timeout written as "90s",
// and an api_key that is read but, in Config, never serialised again.
type FileConfig struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	BaseURL  string `json:"base_url,omitempty"`
	APIKey   string `json:"api_key,omitempty"`
	// Timeout is a Go duration such as "90s" or "3m".
	Timeout string `json:"timeout,omitempty"`
	// MaxRetries is a pointer because 0 (no retries) is a real setting,
	// distinct from "unset", which means DefaultMaxRetries.
	MaxRetries *int `json:"max_retries,omitempty"`
}

// ConfigFromEnv reads the LLM configuration from the environment alone; it
// is ConfigFrom with no file settings.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	return ConfigFrom(FileConfig{}, getenv)
}

// ConfigFrom resolves the LLM configuration from a configuration file's llm
// object and the environment (through getenv: os.Getenv in main, a map in
// tests, so nothing reads globals). Each key is taken from the environment
// when set there, else from the file, else defaulted:
//
//	QUARRY_LLM_PROVIDER     llm.provider     offline (default), openai or anthropic
//	QUARRY_LLM_MODEL        llm.model        default DefaultOpenAIModel / DefaultAnthropicModel
//	QUARRY_LLM_BASE_URL     llm.base_url     e.g. http://localhost:11434/v1 for Ollama
//	QUARRY_LLM_API_KEY      llm.api_key      then OPENAI_API_KEY / ANTHROPIC_API_KEY
//	QUARRY_LLM_TIMEOUT      llm.timeout      per request attempt, a Go duration (default 90s)
//	QUARRY_LLM_MAX_RETRIES  llm.max_retries  SDK retries per request, 0 to 10 (default 2)
//
// The vendors' own OPENAI_API_KEY and ANTHROPIC_API_KEY come after the file's
// api_key: they are ambient fallbacks often set for other tools, while the
// file is Quarry's own explicit setting.
//
// A malformed value is fault.EInvalid with a field named after where the
// value came from (QUARRY_LLM_TIMEOUT or llm.timeout), so the person
// fixing it knows which of the two to edit. Whether the configuration is
// complete (a key for a hosted provider) is New's to check.
func ConfigFrom(file FileConfig, getenv func(string) string) (Config, error) {
	// pick returns the environment's value when set, else the file's, with
	// the name of the field it came from for error messages.
	pick := func(env, key, fileValue string) (string, string) {
		if v := strings.TrimSpace(getenv(env)); v != "" {
			return v, env
		}
		return strings.TrimSpace(fileValue), "llm." + key
	}
	fe := fault.FieldErrors{}
	provider, providerField := pick("QUARRY_LLM_PROVIDER", "provider", file.Provider)
	model, _ := pick("QUARRY_LLM_MODEL", "model", file.Model)
	baseURL, baseURLField := pick("QUARRY_LLM_BASE_URL", "base_url", file.BaseURL)
	apiKey, _ := pick("QUARRY_LLM_API_KEY", "api_key", file.APIKey)
	cfg := Config{
		Provider:   strings.ToLower(provider),
		Model:      model,
		BaseURL:    baseURL,
		APIKey:     apiKey,
		Timeout:    DefaultTimeout,
		MaxRetries: DefaultMaxRetries,
	}
	if cfg.Provider == "" {
		cfg.Provider = ProviderOffline
	}
	if !knownProvider(cfg.Provider) {
		fe.Add(providerField, unknownProvider(provider))
	}
	if _, ok := parseHTTPURL(cfg.BaseURL); cfg.BaseURL != "" && !ok {
		fe.Add(baseURLField, fmt.Sprintf("%q is not an http(s) URL", cfg.BaseURL))
	}
	if cfg.APIKey == "" {
		switch cfg.Provider {
		case ProviderOpenAI:
			cfg.APIKey = strings.TrimSpace(getenv("OPENAI_API_KEY"))
		case ProviderAnthropic:
			cfg.APIKey = strings.TrimSpace(getenv("ANTHROPIC_API_KEY"))
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
	if s, field := pick("QUARRY_LLM_TIMEOUT", "timeout", file.Timeout); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			fe.Add(field, fmt.Sprintf("%q is not a positive duration such as 90s", s))
		}
		cfg.Timeout = d
	}
	retries, retriesField := strings.TrimSpace(getenv("QUARRY_LLM_MAX_RETRIES")), "QUARRY_LLM_MAX_RETRIES"
	if retries == "" && file.MaxRetries != nil {
		retries, retriesField = strconv.Itoa(*file.MaxRetries), "llm.max_retries"
	}
	if retries != "" {
		n, err := strconv.Atoi(retries)
		if err != nil || n < 0 || n > 10 {
			fe.Add(retriesField, fmt.Sprintf("%q is not a whole number between 0 and 10", retries))
		}
		cfg.MaxRetries = n
	}
	if err := fe.Err("invalid LLM configuration"); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// knownProvider reports whether name (lower case) is a provider New builds:
// the one list both New and ConfigFrom check against.
func knownProvider(name string) bool {
	return name == ProviderOffline || name == ProviderOpenAI || name == ProviderAnthropic
}

// unknownProvider is the message for a provider name knownProvider refuses.
func unknownProvider(name string) string {
	return fmt.Sprintf("unknown LLM provider %q; valid providers are %s, %s and %s",
		name, ProviderOffline, ProviderOpenAI, ProviderAnthropic)
}

// parseHTTPURL parses s and reports whether it is an absolute http(s) URL
// with a host, the only kind of base URL the SDKs can send requests to.
func parseHTTPURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	return u, err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
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
	return &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("LLM %s failed", name), Err: err}
}
