package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"quarry/internal/fault"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openAIProvider talks to OpenAI's chat completions API, which Ollama, vLLM,
// llama.cpp's server and OpenRouter all implement, so one client serves
// every OpenAI-compatible endpoint by its base URL.
type openAIProvider struct {
	client openai.Client
	model  string
	// official is true for api.openai.com, whose newer models reject
	// max_tokens in favour of max_completion_tokens; compatible servers
	// mostly only know max_tokens.
	official bool
	budget   int64
	// noSchema is set once the server refused a json_schema response
	// format (an older Ollama, llama.cpp or vLLM, or a proxy): it is then
	// asked in JSON mode for as long as the process runs.
	noSchema atomic.Bool
}

func newOpenAI(cfg Config) *openAIProvider {
	official := strings.HasPrefix(cfg.BaseURL, "https://api.openai.com")
	return &openAIProvider{
		client: openai.NewClient(
			option.WithBaseURL(cfg.BaseURL),
			option.WithAPIKey(cfg.APIKey), // set even when empty, so OPENAI_API_KEY is not picked up behind our back
			option.WithMaxRetries(cfg.MaxRetries),
			option.WithRequestTimeout(cfg.Timeout),
		),
		model:    cfg.Model,
		official: official,
		budget:   cfg.RunTokenBudget,
	}
}

// Name implements Provider.
func (p *openAIProvider) Name() string { return ProviderOpenAI + "/" + p.model }

// Complete implements Provider with one chat completion.
func (p *openAIProvider) Complete(ctx context.Context, r Request) (string, error) {
	if err := allowed(ctx, p.budget); err != nil {
		return "", err
	}
	params := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(p.model),
	}
	if sys := systemPrompt(r); sys != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(sys))
	}
	params.Messages = append(params.Messages, openai.UserMessage(r.Prompt))
	if p.official {
		params.MaxCompletionTokens = openai.Int(r.maxTokens())
	} else {
		params.MaxTokens = openai.Int(r.maxTokens())
	}
	if r.Temperature > 0 {
		params.Temperature = openai.Float(r.Temperature)
	}
	schema := r.Schema != nil && !p.noSchema.Load()
	switch {
	case schema:
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:        r.Schema.Name,
				Description: openai.String(r.Schema.Description),
				Schema:      r.Schema.Doc,
				Strict:      openai.Bool(true),
			}},
		}
	case r.JSON || r.Schema != nil:
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONObject: &shared.ResponseFormatJSONObjectParam{},
		}
	}
	start := time.Now()
	resp, err := p.client.Chat.Completions.New(ctx, params)
	if err != nil && schema && refusesSchema(err) {
		// Remembered for the process: every later request would be
		// refused the same way.
		p.noSchema.Store(true)
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
		resp, err = p.client.Chat.Completions.New(ctx, params)
	}
	if err != nil {
		return "", providerError(p.Name(), err)
	}
	record(ctx, p.Name(), resp.Usage.PromptTokens, resp.Usage.CompletionTokens, time.Since(start))
	if len(resp.Choices) == 0 {
		return "", fault.Errorf(fault.EInternal, "LLM %s returned no choices", p.Name())
	}
	msg := resp.Choices[0].Message
	if msg.Refusal != "" {
		return "", refused(p.Name(), msg.Refusal)
	}
	return msg.Content, nil
}

// refusesSchema reports whether err is a server refusing the json_schema
// response format: a 400 whose message names it (llama.cpp: "response_format
// type must be one of \"text\" or \"json_object\"", OpenAI for a model
// without structured outputs: "Invalid parameter: 'response_format' of
// type 'json_schema' is not supported with this model").
func refusesSchema(err error) bool {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || (apiErr.StatusCode != http.StatusBadRequest && apiErr.StatusCode != http.StatusUnprocessableEntity) {
		return false
	}
	text := strings.ToLower(apiErr.Message + " " + apiErr.Param + " " + apiErr.RawJSON())
	return strings.Contains(text, "response_format") || strings.Contains(text, "json_schema")
}
