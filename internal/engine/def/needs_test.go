package def_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

const needsSrc = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: screen}
params:
  - {name: topic, type: string, default: x}
context: {threshold: 3}
stages:
  - id: fetch
    type: skill
    skill: s
    with: {q: "{{ params.topic }} {{ context.lang }}"}
  - id: score
    type: skill
    skill: s
    with: {n: "{{ outputs.fetch.count }}", min: "{{ context.threshold }}"}
  - id: pick
    type: set
    set: {best: "outputs.score.top"}
  - id: check
    type: gate
    conditions: ["context.best != nil", "context.reviewer != ''"]
    on_pass: report
    on_fail: {goto: fix, max_iterations: 3}
  - id: fix
    type: set
    set: {reviewer: "'auto'"}
    on_complete: check
  - id: report
    type: skill
    skill: s
    condition: "context.verbose"
    with: {best: "{{ context.best }}", all: "{{ outputs.score }}"}
`

func TestNeedsOfAStage(t *testing.T) {
	t.Parallel()
	d, err := def.Load("n.yaml", []byte(needsSrc), opts)
	require.NoError(t, err)
	keys := func(from string) []string {
		t.Helper()
		ns, err := d.Needs(from)
		require.NoError(t, err)
		out := []string{}
		for _, n := range ns {
			out = append(out, n.Key+"@"+n.Stage)
		}
		return out
	}
	// From the first stage: only what no stage writes before reading.
	require.Equal(t, []string{"context.lang@fetch", "context.reviewer@check", "context.verbose@report"}, keys("fetch"))
	// From score: fetch's count too; pick writes best before check reads it.
	require.Equal(t, []string{"context.reviewer@check", "context.verbose@report", "outputs.fetch.count@score"}, keys("score"))
	// From check: best and, for report, score's whole output.
	require.Equal(t, []string{"context.best@check", "context.reviewer@check", "context.verbose@report", "outputs.score@report"}, keys("check"))
	// The initial context counts as given.
	require.NotContains(t, keys("score"), "context.threshold@score")

	_, err = d.Needs("nope")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err)["from"], `has no stage "nope"`)
}
