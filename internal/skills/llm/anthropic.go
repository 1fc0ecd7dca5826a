package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicProvider talks to Anthropic's messages API. A request with a
// Schema offers one tool whose input_schema is the schema and requires
// the model to call it (tool_choice {type: "tool"}), so the answer is the
// tool call's input, already JSON in that shape. Without a schema it asks
// for JSON by instruction rather than by prefilling "{", because recent
// Claude models reject assistant prefill; extractJSON copes with any
// prose around the object.
type anthropicProvider struct {
	client anthropic.Client
	model  string
	budget int64
	// noTools is set once the server refused the tool (an
	// Anthropic-compatible proxy without tool use): it is then asked by
	// instruction for as long as the process runs.
	noTools atomic.Bool
}

func newAnthropic(cfg Config) *anthropicProvider {
	return &anthropicProvider{
		client: anthropic.NewClient(
			option.WithBaseURL(cfg.BaseURL),
			option.WithAPIKey(cfg.APIKey), // set even when empty, so ANTHROPIC_API_KEY is not picked up behind our back
			option.WithMaxRetries(cfg.MaxRetries),
			option.WithRequestTimeout(cfg.Timeout),
		),
		model:  cfg.Model,
		budget: cfg.RunTokenBudget,
	}
}

// Name implements Provider.
func (p *anthropicProvider) Name() string { return ProviderAnthropic + "/" + p.model }

// toolInstruction replaces jsonInstruction when the answer comes as a tool
// call.
const toolInstruction = "Give your answer by calling the %s tool; its input is your answer."

// Complete implements Provider with one message: the forced tool call's
// input when the request has a schema, otherwise the text blocks.
func (p *anthropicProvider) Complete(ctx context.Context, r Request) (string, error) {
	if err := allowed(ctx, p.budget); err != nil {
		return "", err
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: r.maxTokens(),
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(r.Prompt))},
	}
	if r.Temperature > 0 {
		params.Temperature = anthropic.Float(r.Temperature)
	}
	tool := r.Schema != nil && !p.noTools.Load()
	setSystem := func(tool bool) {
		sys := systemPrompt(r)
		if tool {
			sys = strings.TrimSpace(r.System + "\n\n" + strings.ReplaceAll(toolInstruction, "%s", r.Schema.Name))
		}
		params.System = nil
		if sys != "" {
			params.System = []anthropic.TextBlockParam{{Text: sys}}
		}
	}
	setSystem(tool)
	if tool {
		params.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        r.Schema.Name,
			Description: anthropic.String(r.Schema.Description),
			InputSchema: inputSchema(r.Schema.Doc),
		}}}
		params.ToolChoice = anthropic.ToolChoiceParamOfTool(r.Schema.Name)
	}
	start := time.Now()
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil && tool && refusesTool(err) {
		p.noTools.Store(true)
		tool = false
		params.Tools, params.ToolChoice = nil, anthropic.ToolChoiceUnionParam{}
		setSystem(false)
		msg, err = p.client.Messages.New(ctx, params)
	}
	if err != nil {
		return "", providerError(p.Name(), err)
	}
	record(ctx, p.Name(), msg.Usage.InputTokens, msg.Usage.OutputTokens, time.Since(start))
	var text strings.Builder
	for _, c := range msg.Content {
		switch {
		case c.Type == "tool_use" && tool && c.Name == r.Schema.Name:
			return string(c.Input), nil
		case c.Type == "text":
			text.WriteString(c.Text)
		}
	}
	if msg.StopReason == anthropic.StopReasonRefusal {
		return "", refused(p.Name(), text.String())
	}
	return text.String(), nil
}

// inputSchema is an object schema as the SDK's tool input schema: its
// properties and required list, the rest (additionalProperties) kept as
// extra fields.
func inputSchema(doc map[string]any) anthropic.ToolInputSchemaParam {
	s := anthropic.ToolInputSchemaParam{Properties: doc["properties"], ExtraFields: map[string]any{}}
	if req, ok := doc["required"].([]string); ok {
		s.Required = req
	}
	for k, v := range doc {
		if k != "type" && k != "properties" && k != "required" {
			s.ExtraFields[k] = v
		}
	}
	return s
}

// refusesTool reports whether err is a server refusing tool use: a 400
// naming tools or tool_choice.
func refusesTool(err error) bool {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return false
	}
	text := strings.ToLower(apiErr.RawJSON())
	return strings.Contains(text, "tool_choice") || strings.Contains(text, "tools") || strings.Contains(text, "input_schema")
}
