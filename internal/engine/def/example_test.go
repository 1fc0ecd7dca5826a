package def_test

import (
	"errors"
	"fmt"

	"quarry/internal/engine/def"
)

// Load reports every problem of a file at once, each with its place.
func ExampleLoad() {
	src := []byte(`apiVersion: quarry/v1
kind: Workflow
metadata: {name: demo}
params: [{name: n, type: int, default: 3}]
stages:
  - id: fetch
    type: skill
    skill: search.run
    with: {limit: "{{ params.limit }}"}
  - id: check
    type: gate
    conditions: ["outputs.fetch.count > params.n"]
    on_fail: {goto: fetch}
`)
	_, err := def.Load("demo.yaml", src, def.Options{Skills: []string{"search.run"}})
	var errs def.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			fmt.Println(e)
		}
	}
	// Output:
	// demo.yaml:9:19: stage "fetch": expression "params.limit": params.limit is not a declared parameter
	// demo.yaml:13:21: stage "check": on_fail.goto: going back to "fetch" makes a loop without max_iterations (set it on a stage of the loop, or on the gate's on_fail)
}
