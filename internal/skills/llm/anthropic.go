package llm

import (
	"context"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicProvider talks to Anthropic's messages API. It asks for JSON by
// instruction rather than by prefilling "{", because recent Claude models
// reject assistant prefill; extractJSON copes with any prose around the
// object.
type anthropicProvider struct {
	client anthropic.Client
	model  string
}

func newAnthropic(cfg Config) *anthropicProvider {
	return &anthropicProvider{
		client: anthropic.NewClient(
			option.WithBaseURL(cfg.BaseURL),
			option.WithAPIKey(cfg.APIKey), // set even when empty, so ANTHROPIC_API_KEY is not picked up behind our back
			option.WithMaxRetries(cfg.MaxRetries),
			option.WithRequestTimeout(cfg.Timeout),
		),
		model: cfg.Model,
	}
}

// Name implements Provider.
func (p *anthropicProvider) Name() string { return ProviderAnthropic + "/" + p.model }

// Complete implements Provider with one message; the answer is the
// concatenation of its text blocks.
func (p *anthropicProvider) Complete(ctx context.Context, r Request) (string, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: r.maxTokens(),
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(r.Prompt))},
	}
	if sys := systemPrompt(r); sys != "" {
		params.System = []anthropic.TextBlockParam{{Text: sys}}
	}
	if r.Temperature > 0 {
		params.Temperature = anthropic.Float(r.Temperature)
	}
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil {
		return "", providerError(p.Name(), err)
	}
	var b strings.Builder
	for _, c := range msg.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String(), nil
}
