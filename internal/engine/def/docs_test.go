package def

import (
	"os"
	"slices"
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
		"escalate", "fail", "all", "any", "complete", "item", "secrets", "trigger", "schedule", "concurrency", "runs",
		"extend", "max_extensions", "webhook", "email",
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

// TestREADMEExampleLoads: the README's complete example is a valid file
// (with its webhook host allowed), so the format it teaches is the one
// the loader takes.
func TestREADMEExampleLoads(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "### Workflows as files")
	if !ok {
		t.Fatal("README.md has no section \"Workflows as files\"")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatal("the README's workflows section has no yaml example")
	}
	src, _, _ := strings.Cut(rest, "```")
	d, err := Load("README.md", []byte(src), Options{WebhookHosts: []string{"hooks.example.org"}, Skills: []string{"search.parse"}})
	if err != nil {
		t.Fatalf("the README's example does not load:\n%v", err)
	}
	var types []StageType
	for _, s := range d.Stages {
		types = append(types, s.Type)
	}
	for _, s := range d.Stages {
		for _, b := range s.Branches {
			for _, bs := range b.Stages {
				types = append(types, bs.Type)
			}
		}
	}
	for _, want := range []StageType{TypeSet, TypeSkill, TypeParallel, TypeWebhook, TypeGate, TypeDelay} {
		if !slices.Contains(types, want) {
			t.Errorf("the example has no %s stage", want)
		}
	}
}
