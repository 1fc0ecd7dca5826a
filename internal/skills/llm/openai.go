package llm

import (
	"context"
	"quarry/internal/fault"
	"strings"

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
	}
}

// Name implements Provider.
func (p *openAIProvider) Name() string { return ProviderOpenAI + "/" + p.model }

// Complete implements Provider with one chat completion.
func (p *openAIProvider) Complete(ctx context.Context, r Request) (string, error) {
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
	if r.JSON {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONObject: &shared.ResponseFormatJSONObjectParam{},
		}
	}
	resp, err := p.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return "", providerError(p.Name(), err)
	}
	if len(resp.Choices) == 0 {
		return "", fault.Errorf(fault.EInternal, "LLM %s returned no choices", p.Name())
	}
	return resp.Choices[0].Message.Content, nil
}
