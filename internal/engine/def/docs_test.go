package def

import (
	"os"
	"strings"
	"testing"
)

// TestReferenceNamesEveryKey keeps docs/workflows.md true to the decoder:
// every key a file may write appears there as `key`.
func TestReferenceNamesEveryKey(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../../docs/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := append([]string{
		"apiVersion", "kind", "metadata", "params", "context", "stages",
		"name", "title", "description", "version",
		"type", "required", "default", "min", "max", "enum",
		"retry", "backoff", "then", "goto", "label", "next", "requires_input",
		"interval", "method", "url", "headers", "body", "status", "json",
		"escalate", "fail", "all", "any", "complete", "item", "secrets",
	}, allStageKeys...)
	for _, tp := range []StageType{TypeSkill, TypeAction, TypeSet, TypeGate, TypeParallel, TypeDelay, TypeWebhook} {
		keys = append(keys, string(tp))
	}
	for _, k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") && !strings.Contains(string(doc), "."+k+"`") && !strings.Contains(string(doc), "`"+k+".") && !strings.Contains(string(doc), "`"+k+"[]") {
			t.Errorf("docs/workflows.md does not mention `%s`", k)
		}
	}
}
