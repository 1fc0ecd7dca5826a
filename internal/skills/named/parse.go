package named

import (
	"context"
	"fmt"
	"strings"

	"quarry/internal/fault"
)

// parse is search.parse: with {question} → {intent}, the question read by
// the pipeline's intent parser.
func parse(d Deps) Skill {
	return func(ctx context.Context, in In) (map[string]any, error) {
		with := in.With
		q, err := arg[string](with, "question", true)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(q) == "" {
			return nil, fault.Errorf(fault.EInvalid, "with.question is empty")
		}
		intent, err := d.Intent.ParseIntent(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("parse the question: %w", err)
		}
		if err := intent.Validate(); err != nil {
			return nil, fmt.Errorf("the intent parser returned an invalid intent: %w", err)
		}
		return plain(map[string]any{"intent": intent})
	}
}
