package flow_test

import (
	"context"
	"fmt"

	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
)

// Compile turns each stage into one engine step whose transitions are
// declared data: on_complete is ok, skip_to is skip, and every other
// target (an option, an on_fail goto) is a goto outcome.
func ExampleCompile() {
	skills := flow.Skills{"search.run": func(ctx context.Context, in flow.Input) (map[string]any, error) {
		return map[string]any{"hits": 3}, nil
	}}
	src := []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: demo}
params: [{name: q, type: string, required: true}]
stages:
  - id: search
    type: skill
    skill: search.run
    with: {query: "{{ params.q }}"}
    outputs: [{name: hits, required: true}]
    on_error: {retry: 2, backoff: 5s, then: escalate}
  - id: review
    type: gate
    options:
      - {label: Again, next: search, requires_input: true}
      - {label: Done, next: complete}
    on_fail: {max_iterations: 3, then: fail}
`)
	d, err := def.Load("demo.yaml", src, def.Options{Skills: skills.Names()})
	if err != nil {
		fmt.Println(err)
		return
	}
	wf, err := flow.Compile(d, skills)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range wf.Graph().Edges {
		fmt.Printf("%s --%s--> %s\n", e.From, e.Outcome, e.To)
	}
	// Output:
	// search --ok--> review
	// search --skip--> review
	// review --goto:_end--> _end
	// review --goto:search--> search
}
