package llm_test

import (
	"context"
	"fmt"

	"quarry/internal/research"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
)

// Example shows the wiring the application does once at start-up: take
// the configuration (internal/app resolves it from QUARRY_LLM_* and the
// configuration file), build the provider (nil when offline), wrap each
// offline skill, and attach a note recorder per step. With the offline
// provider, the default, the wrappers are the offline skills themselves.
func Example() {
	cfg := llm.Config{Provider: llm.ProviderOffline}
	p, err := llm.New(cfg)
	if err != nil {
		panic(err)
	}
	parser := llm.NewIntentParser(p, intent.New(nil))
	builder := llm.NewQueryBuilder(p, querybuilder.New())
	scorer := llm.NewScorer(p, relevance.Scorer{})

	var notes []research.Note
	ctx := research.WithNotes(context.Background(), func(n research.Note) { notes = append(notes, n) })
	intent, err := parser.ParseIntent(ctx, "sleep deprivation and memory consolidation")
	if err != nil {
		panic(err)
	}
	_, isOffline := builder.(*querybuilder.Builder)
	fmt.Println(cfg.Provider, p == nil, isOffline, scorer == relevance.Scorer{}, len(intent.Concepts) > 0, len(notes))
	// Output: offline true true true true 0
}
