// Package llm connects Quarry to large language models: a small Provider
// interface with OpenAI-compatible and Anthropic implementations, and
// LLM-backed variants of the intent parser, query builder and relevance
// scorer. Every variant wraps an offline skill and falls back to it, with a
// research.Note, whenever the model errors or answers something that fails
// validation twice, so a flaky or absent model never stops a search.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"quarry/internal/fault"
	"quarry/internal/research"
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

// DefaultMaxRetries is the default of QUARRY_LLM_MAX_RETRIES (the file's
// llm.max_retries): the SDKs' own default, which rides out a rate limit or
// a 5xx blip.
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
	// Schema, when set, asks for an answer in that shape through the API's
	// structured output: OpenAI's response_format json_schema (strict), or
	// for Anthropic a tool with the schema as input_schema that the model
	// must call. A server that refuses the schema is asked again in JSON
	// mode, and not sent a schema again while the process runs.
	Schema *Schema
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
// application can build it from its settings (the QUARRY_LLM_* variables
// and the configuration file's llm object, resolved by internal/app), a
// settings page or a test. APIKey is never serialised, so a
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
	// RunTokenBudget caps the tokens (in and out) one run may spend on the
	// model; once a run has spent it, the skills are not sent to the model
	// any more and fall back to their offline variants, with a note. Zero
	// means no cap. It is checked before each request, so the request
	// that crosses it (and the scorer's batches already in flight) still
	// complete: a run may end a little past it.
	RunTokenBudget int64 `json:"run_token_budget"`
}

// DefaultRunTokenBudget is the default of QUARRY_LLM_RUN_TOKEN_BUDGET:
// some 250 scoring batches of twenty papers with their abstracts (about
// 5,000 papers scored), far above what an ordinary run of a few
// iterations spends, low enough that a runaway run (many iterations, many
// pages of results) stops costing money.
const DefaultRunTokenBudget = 2_000_000

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
	if cfg.RunTokenBudget < 0 {
		return nil, fault.Errorf(fault.EInvalid, "LLM run token budget must not be negative (got %d)", cfg.RunTokenBudget)
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

// CheckProvider returns an error naming the valid providers when name (in
// any case) is not one New builds, so the application's configuration can
// refuse it at start-up, under the name of the setting that gave it.
func CheckProvider(name string) error {
	if knownProvider(strings.ToLower(strings.TrimSpace(name))) {
		return nil
	}
	return errors.New(unknownProvider(name))
}

// knownProvider reports whether name (lower case) is a provider New builds:
// the one list both New and CheckProvider check against.
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

// ErrRefused is the cause of a provider's error when the model declined to
// answer (OpenAI's refusal field, Anthropic's refusal stop reason): asking
// again would not help, so the skill falls back at once. A refusal in
// prose is an answer without JSON, retried once like any other, and
// quoted in the error.
var ErrRefused = errors.New("the model declined to answer")

// ErrBudgetSpent is the cause of a provider's error when the run has spent
// its token budget (Config.RunTokenBudget), so the request was not sent.
var ErrBudgetSpent = errors.New("the run's LLM token budget is spent")

// refused is the error for a refusal, quoting the model's words.
func refused(name, words string) error {
	msg := fmt.Sprintf("LLM %s declined to answer", name)
	if w := clip(oneLine(words), 300); w != "" {
		msg += ": " + w
	}
	return &fault.Error{Code: fault.EInvalid, Message: msg, Err: ErrRefused}
}

// allowed checks the run's budget before a request is sent: with no meter
// in ctx (no run) or no budget, every request may go.
func allowed(ctx context.Context, budget int64) error {
	m := research.LLMMeterOf(ctx)
	if m == nil || m.Allow(budget) {
		return nil
	}
	return &fault.Error{Code: fault.EInvalid, Err: ErrBudgetSpent, Message: fmt.Sprintf(
		"the run's LLM token budget of %d tokens is spent (%d used), so the model is not asked again in this run", budget, m.Usage().Tokens())}
}

// record counts an answered request on the run's meter.
func record(ctx context.Context, name string, in, out int64, took time.Duration) {
	if m := research.LLMMeterOf(ctx); m != nil {
		m.Record(research.LLMCall{Model: name, TokensIn: in, TokensOut: out, Latency: took})
	}
}

// providerError wraps an SDK error so that callers see which provider failed
// without the SDK's types leaking out of this package.
func providerError(name string, err error) error {
	return &fault.Error{Code: fault.EInternal, Message: fmt.Sprintf("LLM %s failed", name), Err: err}
}
