package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
)

// server is a fake model server with a behaviour: reply gets the n-th
// request's body (from 0) and returns the status and JSON it answers.
type server struct {
	t     *testing.T
	kind  string
	srv   *httptest.Server
	reply func(n int, body map[string]any) (int, any)
	mu    sync.Mutex
	reqs  []map[string]any
}

func newServer(t *testing.T, kind string, reply func(n int, body map[string]any) (int, any)) *server {
	t.Helper()
	s := &server{t: t, kind: kind, reply: reply}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, body)
		s.mu.Unlock()
		status, out := s.reply(n, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) provider(budget int64) llm.Provider {
	s.t.Helper()
	base := s.srv.URL
	if s.kind == llm.ProviderOpenAI {
		base += "/v1"
	}
	p, err := llm.New(llm.Config{Provider: s.kind, Model: testModel, BaseURL: base, APIKey: testKey, Timeout: 5 * time.Second, RunTokenBudget: budget})
	require.NoError(s.t, err)
	return p
}

func (s *server) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// chatCompletion is an OpenAI chat completion answering content (nil for
// JSON null) with refusal (nil for none), in the documented shape.
func chatCompletion(content, refusal any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1741569952, "model": testModel,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": content, "refusal": refusal}}},
		"usage": map[string]any{"prompt_tokens": 300, "completion_tokens": 50, "total_tokens": 350},
	}
}

// message is an Anthropic message with the content blocks and stop reason.
func message(stop string, content ...any) map[string]any {
	return map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": testModel,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 300, "output_tokens": 50},
	}
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// validIntent is testdata/answers/intent_valid.json decoded.
func validIntent(t *testing.T) map[string]any {
	var v map[string]any
	require.NoError(t, json.Unmarshal(readTestdata(t, "answers/intent_valid.json"), &v))
	return v
}

// requireStrict checks schema against the rules of OpenAI's strict mode:
// every object lists all its properties as required and closes with
// additionalProperties false, recursively.
func requireStrict(t *testing.T, schema any, path string) {
	t.Helper()
	m, ok := schema.(map[string]any)
	require.True(t, ok, "%s: a schema is an object", path)
	switch m["type"] {
	case "object":
		props, ok := m["properties"].(map[string]any)
		require.True(t, ok, "%s: properties", path)
		var keys, req []string
		for k := range props {
			keys = append(keys, k)
		}
		for _, r := range m["required"].([]any) {
			req = append(req, r.(string))
		}
		sort.Strings(keys)
		sort.Strings(req)
		require.Equal(t, keys, req, "%s: strict mode requires every property", path)
		require.Equal(t, false, m["additionalProperties"], "%s: strict mode requires additionalProperties false", path)
		for k, v := range props {
			requireStrict(t, v, path+"."+k)
		}
	case "array":
		requireStrict(t, m["items"], path+"[]")
	case "string", "integer", "number", "boolean":
	default:
		t.Fatalf("%s: unexpected type %v", path, m["type"])
	}
}

// requireOpenAISchema checks a request asks for structured output in the
// shape OpenAI documents: response_format {type: "json_schema",
// json_schema: {name, schema, strict: true}}.
func requireOpenAISchema(t *testing.T, body map[string]any, name string) {
	t.Helper()
	rf, ok := body["response_format"].(map[string]any)
	require.True(t, ok, "response_format missing: %v", body)
	require.Equal(t, "json_schema", rf["type"])
	js := rf["json_schema"].(map[string]any)
	require.Equal(t, name, js["name"])
	require.Equal(t, true, js["strict"])
	requireStrict(t, js["schema"], name)
}

// requireAnthropicTool checks a request offers one tool with the schema as
// input_schema and forces it with tool_choice {type: "tool", name}.
func requireAnthropicTool(t *testing.T, body map[string]any, name string) {
	t.Helper()
	tools, ok := body["tools"].([]any)
	require.True(t, ok, "tools missing: %v", body)
	require.Len(t, tools, 1)
	tool := tools[0].(map[string]any)
	require.Equal(t, name, tool["name"])
	requireStrict(t, tool["input_schema"], name)
	require.Equal(t, map[string]any{"type": "tool", "name": name}, body["tool_choice"])
}

// TestSkillsSendTheirSchema checks every LLM skill's request against each
// provider's documented structured-output shape.
func TestSkillsSendTheirSchema(t *testing.T) {
	t.Parallel()
	intentIn := research.ParsedIntent{Topic: "sleep and memory", Concepts: []research.Concept{{Term: "sleep"}, {Term: "memory"}}}
	run := map[string]func(ctx context.Context, p llm.Provider){
		"search_intent": func(ctx context.Context, p llm.Provider) {
			_, _ = llm.NewIntentParser(p, offlineIntent(t)).ParseIntent(ctx, question)
		},
		"clarifying_questions": func(ctx context.Context, p llm.Provider) {
			_, _ = llm.NewClarifier(p, offlineIntent(t)).Clarify(ctx, question, intentIn)
		},
		"search_queries": func(ctx context.Context, p llm.Provider) {
			_, _ = llm.NewQueryBuilder(p, querybuilder.New()).BuildStrategy(ctx, skills.QueryInput{Intent: intentIn, Sources: []string{"openalex"}})
		},
		"relevance_scores": func(ctx context.Context, p llm.Provider) {
			_, _ = llm.NewScorer(p, relevance.Scorer{}).Score(ctx, skills.ScoreInput{Intent: intentIn,
				Papers: []research.RawPaper{{ID: "p1", Source: "openalex", Title: "Sleep and memory"}}})
		},
	}
	for _, kind := range kinds {
		for name, call := range run {
			t.Run(kind+"/"+name, func(t *testing.T) {
				t.Parallel()
				s := newServer(t, kind, func(int, map[string]any) (int, any) {
					return http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": "no"}}
				})
				call(context.Background(), s.provider(0))
				reqs := s.requests()
				require.NotEmpty(t, reqs)
				if kind == llm.ProviderOpenAI {
					requireOpenAISchema(t, reqs[0], name)
				} else {
					requireAnthropicTool(t, reqs[0], name)
				}
			})
		}
	}
}

func TestStructuredOutputHonoured(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			want := validIntent(t)
			s := newServer(t, kind, func(_ int, body map[string]any) (int, any) {
				if kind == llm.ProviderOpenAI {
					if _, ok := body["response_format"].(map[string]any)["json_schema"]; !ok {
						return http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "expected a json_schema"}}
					}
					raw, _ := json.Marshal(want)
					return http.StatusOK, chatCompletion(string(raw), nil)
				}
				// A forced tool call answers with the tool's input only.
				return http.StatusOK, message("tool_use", map[string]any{"type": "tool_use", "id": "toolu_1", "name": "search_intent", "input": want})
			})
			var n notes
			got, err := llm.NewIntentParser(s.provider(0), offlineIntent(t)).ParseIntent(n.ctx(), question)
			require.NoError(t, err)
			require.Equal(t, "mindfulness interventions for anxiety in adolescents", got.Topic)
			require.Empty(t, n.all())
			require.Len(t, s.requests(), 1)
		})
	}
}

func TestStructuredOutputIgnoredProseWithFencedJSON(t *testing.T) {
	t.Parallel()
	fenced := string(readTestdata(t, "answers/fenced_intent.txt"))
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, kind, func(int, map[string]any) (int, any) {
				if kind == llm.ProviderOpenAI {
					return http.StatusOK, chatCompletion(fenced, nil)
				}
				return http.StatusOK, message("end_turn", textBlock(fenced))
			})
			var n notes
			got, err := llm.NewIntentParser(s.provider(0), offlineIntent(t)).ParseIntent(n.ctx(), question)
			require.NoError(t, err)
			require.Equal(t, "sleep and memory", got.Topic)
			require.Empty(t, n.all())
			require.Len(t, s.requests(), 1)
		})
	}
}

// TestSchemaRefusedFallsBackToJSONMode: a server without structured
// outputs (this 400 is llama.cpp's older server's) is asked again in JSON
// mode, and the provider remembers it.
func TestSchemaRefusedFallsBackToJSONMode(t *testing.T) {
	t.Parallel()
	want, _ := json.Marshal(validIntent(t))
	s := newServer(t, llm.ProviderOpenAI, func(_ int, body map[string]any) (int, any) {
		if body["response_format"].(map[string]any)["type"] == "json_schema" {
			return http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "type": "invalid_request_error",
				"message": `response_format type must be one of "text" or "json_object", but got: json_schema`}}
		}
		return http.StatusOK, chatCompletion(string(want), nil)
	})
	p := s.provider(0)
	ip := llm.NewIntentParser(p, offlineIntent(t))
	for range 2 {
		var n notes
		got, err := ip.ParseIntent(n.ctx(), question)
		require.NoError(t, err)
		require.Equal(t, "mindfulness interventions for anxiety in adolescents", got.Topic)
		require.Empty(t, n.all())
	}
	var formats []any
	for _, r := range s.requests() {
		formats = append(formats, r["response_format"].(map[string]any)["type"])
	}
	require.Equal(t, []any{"json_schema", "json_object", "json_object"}, formats, "refused once, then JSON mode for the process")
}

func TestRefusalSurfacesAndFallsBack(t *testing.T) {
	t.Parallel()
	cases := map[string]func(int, map[string]any) (int, any){
		"openai/refusal": func(int, map[string]any) (int, any) {
			return http.StatusOK, chatCompletion(nil, "I'm sorry, I cannot assist with that request.")
		},
		"anthropic/stop_reason": func(int, map[string]any) (int, any) {
			return http.StatusOK, message("refusal", textBlock("I cannot assist with that request."))
		},
		"anthropic/text": func(int, map[string]any) (int, any) {
			return http.StatusOK, message("end_turn", textBlock("I cannot assist with that request."))
		},
	}
	for name, reply := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, strings.Split(name, "/")[0], reply)
			var n notes
			got, err := llm.NewIntentParser(s.provider(0), offlineIntent(t)).ParseIntent(n.ctx(), question)
			require.NoError(t, err, "a refusal falls back, it does not fail the step")
			off, err := offlineIntent(t).ParseIntent(context.Background(), question)
			require.NoError(t, err)
			require.Equal(t, off, got, "the offline parser's answer")
			notes := n.all()
			require.Len(t, notes, 1)
			require.Contains(t, notes[0].Message, "I cannot assist with that request.", "the model's words are in the note")
			require.Contains(t, notes[0].Message, "offline intent parser was used instead")
			if name != "anthropic/text" {
				// A refusal proper is not asked again; prose without an
				// object is, as any unusable answer.
				require.Contains(t, notes[0].Message, "declined to answer")
				require.Len(t, s.requests(), 1)
			}
		})
	}
}

func TestProviderRefusalError(t *testing.T) {
	t.Parallel()
	s := newServer(t, llm.ProviderOpenAI, func(int, map[string]any) (int, any) {
		return http.StatusOK, chatCompletion(nil, "I can't help with that.")
	})
	_, err := s.provider(0).Complete(context.Background(), llm.Request{Prompt: "x", JSON: true})
	require.ErrorIs(t, err, llm.ErrRefused)
	require.Contains(t, err.Error(), "I can't help with that.")
}

func TestUsageRecordedAndBudgetStopsAsking(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			want := validIntent(t)
			s := newServer(t, kind, func(int, map[string]any) (int, any) {
				if kind == llm.ProviderOpenAI {
					raw, _ := json.Marshal(want)
					return http.StatusOK, chatCompletion(string(raw), nil)
				}
				return http.StatusOK, message("tool_use", map[string]any{"type": "tool_use", "id": "toolu_1", "name": "search_intent", "input": want})
			})
			var calls []research.LLMCall
			meter := research.NewLLMMeter(research.LLMUsage{}, func(c research.LLMCall) { calls = append(calls, c) })
			var n notes
			ctx := research.WithLLMMeter(n.ctx(), meter)
			ip := llm.NewIntentParser(s.provider(500), offlineIntent(t))

			_, err := ip.ParseIntent(ctx, question)
			require.NoError(t, err)
			u := meter.Usage()
			require.Equal(t, 1, u.Calls)
			require.EqualValues(t, 300, u.TokensIn)
			require.EqualValues(t, 50, u.TokensOut)
			require.Len(t, calls, 1)
			require.Equal(t, kind+"/"+testModel, calls[0].Model)
			require.Positive(t, calls[0].Latency)
			require.Empty(t, n.all())

			// 350 of 500 spent: one more call is allowed and overshoots.
			_, err = ip.ParseIntent(ctx, question)
			require.NoError(t, err)
			require.EqualValues(t, 700, meter.Usage().Tokens())
			require.Empty(t, n.all())

			// Spent: the model is not asked; the offline parser answers.
			got, err := ip.ParseIntent(ctx, question)
			require.NoError(t, err)
			off, _ := offlineIntent(t).ParseIntent(context.Background(), question)
			require.Equal(t, off, got)
			require.Len(t, s.requests(), 2, "no request once the budget is spent")
			require.Equal(t, 1, meter.Usage().Skipped)
			notes := n.all()
			require.Len(t, notes, 1)
			require.Contains(t, notes[0].Message, "token budget of 500 tokens is spent")
			require.Contains(t, notes[0].Message, "offline intent parser was used instead")

			_, err = s.provider(500).Complete(ctx, llm.Request{Prompt: "x"})
			require.True(t, errors.Is(err, llm.ErrBudgetSpent))
		})
	}
}

// TestStructuredRequestsAsDocumented compares the structured-output part
// of a request with the shape each vendor documents, written out in full:
// OpenAI's chat completions reference (response_format of type
// json_schema with name, description, schema and strict; accepted alike
// by Ollama's OpenAI compatibility, vLLM's structured outputs and
// llama.cpp's server) and Anthropic's tool use guide (tools with name,
// description and input_schema; tool_choice {"type": "tool", "name"}).
func TestStructuredRequestsAsDocumented(t *testing.T) {
	t.Parallel()
	schema := `{"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
		"required": ["queries"], "additionalProperties": false}`
	want := map[string]string{
		llm.ProviderOpenAI: `{"response_format": {"type": "json_schema", "json_schema": {"name": "search_queries",
			"description": "The search queries, in the query syntax described.", "strict": true, "schema": ` + schema + `}}}`,
		llm.ProviderAnthropic: `{"tools": [{"name": "search_queries", "description": "The search queries, in the query syntax described.",
			"input_schema": ` + schema + `}], "tool_choice": {"type": "tool", "name": "search_queries"}}`,
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, kind, func(int, map[string]any) (int, any) {
				if kind == llm.ProviderOpenAI {
					return http.StatusOK, chatCompletion(`{"queries": ["sleep memory"]}`, nil)
				}
				return http.StatusOK, message("tool_use", map[string]any{"type": "tool_use", "id": "toolu_1", "name": "search_queries",
					"input": map[string]any{"queries": []string{"sleep memory"}}})
			})
			in := research.ParsedIntent{Topic: "sleep and memory", Concepts: []research.Concept{{Term: "sleep"}, {Term: "memory"}}}
			var n notes
			st, err := llm.NewQueryBuilder(s.provider(0), querybuilder.New()).BuildStrategy(n.ctx(), skills.QueryInput{Intent: in, Sources: []string{"openalex"}})
			require.NoError(t, err)
			require.Empty(t, n.all())
			require.Equal(t, "sleep memory", st.Queries[0].Text)
			body := s.requests()[0]
			got := map[string]any{}
			for _, k := range []string{"response_format", "tools", "tool_choice"} {
				if v, ok := body[k]; ok {
					got[k] = v
				}
			}
			raw, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, want[kind], string(raw))
		})
	}
}
