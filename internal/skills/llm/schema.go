package llm

import (
	"maps"
	"slices"

	"quarry/internal/research"
)

// Schema is the JSON Schema of a skill's answer, sent as structured-output
// constraint: OpenAI's response_format json_schema (which Ollama, vLLM and
// llama.cpp's server accept too) or the input_schema of the one tool an
// Anthropic request must call. The schemas keep to the subset OpenAI's
// strict mode accepts: every object closes with additionalProperties
// false and requires every property, and no numeric or length bounds,
// which several servers' grammar compilers reject; the skills' checks
// enforce the bounds and ask again.
type Schema struct {
	// Name labels the schema (OpenAI's json_schema.name, the Anthropic
	// tool's name): a-z, A-Z, 0-9, "_" and "-", at most 64 characters.
	Name string
	// Description says what the answer is for (the tool's description).
	Description string
	// Doc is the schema itself, an object schema.
	Doc map[string]any
}

// object is a strict object schema: every property required, nothing else
// allowed.
func object(props map[string]any) map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             slices.Sorted(maps.Keys(props)),
		"additionalProperties": false,
	}
}

func array(items any) map[string]any { return map[string]any{"type": "array", "items": items} }

func typed(t string) map[string]any { return map[string]any{"type": t} }

// yearRangeSchema is a research.YearRange, 0 meaning open.
func yearRangeSchema() map[string]any {
	return object(map[string]any{"from": typed("integer"), "to": typed("integer")})
}

// intentSchema is a research.ParsedIntent as the intent prompt describes it.
func intentSchema() *Schema {
	strs := func() map[string]any { return array(typed("string")) }
	return &Schema{Name: "search_intent", Description: "The research question as a structured search intent.", Doc: object(map[string]any{
		"topic":           typed("string"),
		"concepts":        array(object(map[string]any{"term": typed("string"), "synonyms": strs()})),
		"year_range":      yearRangeSchema(),
		"include_terms":   strs(),
		"exclude_terms":   strs(),
		"fields_of_study": strs(),
		"study_types":     strs(),
	})}
}

// clarifySchema is a clarifyAnswer; a question's kind is one of the known
// kinds, and fields a kind does not use are "" or 0.
func clarifySchema() *Schema {
	kinds := make([]any, 0, len(research.ClarifyKinds()))
	for _, k := range research.ClarifyKinds() {
		kinds = append(kinds, k)
	}
	option := object(map[string]any{"label": typed("string"), "value": typed("string"), "year_range": yearRangeSchema()})
	question := object(map[string]any{
		"id":      typed("string"),
		"kind":    map[string]any{"type": "string", "enum": kinds},
		"text":    typed("string"),
		"term":    typed("string"),
		"options": array(option),
		"other":   typed("boolean"),
	})
	return &Schema{Name: "clarifying_questions", Description: "The clarifying questions the research question needs, none when it is clear.",
		Doc: object(map[string]any{"questions": array(question)})}
}

// querySchema is a queryAnswer.
func querySchema() *Schema {
	return &Schema{Name: "search_queries", Description: "The search queries, in the query syntax described.",
		Doc: object(map[string]any{"queries": array(typed("string"))})}
}

// scoreSchema is a scoreAnswer.
func scoreSchema() *Schema {
	item := object(map[string]any{"n": typed("integer"), "score": typed("number"), "reason": typed("string")})
	return &Schema{Name: "relevance_scores", Description: "A relevance score for each numbered paper.",
		Doc: object(map[string]any{"scores": array(item)})}
}
