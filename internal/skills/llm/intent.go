package llm

import (
	"context"
	"fmt"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
)

// Skill names used in notes, matching the pipeline's vocabulary.
const (
	SkillIntentParser = "intent_parser"
	SkillQueryBuilder = "query_builder"
	SkillScorer       = "scorer"
)

// maxConcepts bounds the concepts an LLM intent may carry; more than this is
// a summary of the question, not its key ideas.
const maxConcepts = 8

// IntentParser asks a model to make a research question explicit, which
// reads paraphrase and domain vocabulary far better than the offline
// keyphrase rules, and falls back to those rules when the model fails.
type IntentParser struct {
	p        Provider
	fallback skills.IntentParser
}

// NewIntentParser returns an LLM-backed intent parser over p that falls
// back to fallback. With no provider (p == nil, the offline configuration)
// it returns fallback itself, so callers wire both cases the same way.
func NewIntentParser(p Provider, fallback skills.IntentParser) skills.IntentParser {
	if p == nil {
		return fallback
	}
	return &IntentParser{p: p, fallback: fallback}
}

const intentSystem = `You help researchers search the scholarly literature. You turn a research question into a structured search intent.
Reply with a JSON object with exactly these fields:
{"topic": string, the question restated as a short topic;
 "concepts": [{"term": string, "synonyms": [string]}], 1 to 8 key ideas of the question, each with the other words authors use for it (abbreviations, spelling variants, narrower or lay terms); no filler words such as "effect" or "study";
 "year_range": {"from": int, "to": int}, publication years the question asks for, 0 when open;
 "include_terms": [string], phrases the researcher insists on (quoted in the question);
 "exclude_terms": [string], things the researcher wants left out;
 "fields_of_study": [string], e.g. "Medicine", "Computer Science";
 "study_types": [string], e.g. "randomized controlled trial", "systematic review", only when asked for}.`

// ParseIntent implements skills.IntentParser.
func (ip *IntentParser) ParseIntent(ctx context.Context, question string) (research.ParsedIntent, error) {
	q := strings.TrimSpace(question)
	if q == "" || len(q) > research.MaxQuestionLength {
		return ip.fallback.ParseIntent(ctx, question) // the fallback words the input error
	}
	intent, err := askJSON(ctx, ip.p, Request{System: intentSystem, Prompt: "Research question: " + q, MaxTokens: 2048, Schema: intentSchema()},
		func(in *research.ParsedIntent) error { return checkIntent(in, q) })
	if err == nil {
		return intent, nil
	}
	if ctx.Err() != nil {
		return research.ParsedIntent{}, ctx.Err()
	}
	fellBack(ctx, SkillIntentParser, ip.p, err)
	return ip.fallback.ParseIntent(ctx, question)
}

// checkIntent cleans a model's intent in place and validates it: the
// research.ParsedIntent rules plus at least one concept, which the query
// builder needs.
func checkIntent(in *research.ParsedIntent, question string) error {
	in.Topic = oneLine(in.Topic)
	if in.Topic == "" {
		in.Topic = question
	}
	var concepts []research.Concept
	seen := map[string]bool{}
	for _, c := range in.Concepts {
		c.Term = oneLine(c.Term)
		k := strings.ToLower(c.Term)
		if c.Term != "" && seen[k] {
			continue
		}
		seen[k] = true
		var syn []string
		for _, s := range cleanList(c.Synonyms) {
			if !strings.EqualFold(s, c.Term) {
				syn = append(syn, s)
			}
		}
		c.Synonyms = syn
		concepts = append(concepts, c)
	}
	in.Concepts = concepts
	in.IncludeTerms = cleanList(in.IncludeTerms)
	in.ExcludeTerms = cleanList(in.ExcludeTerms)
	in.FieldsOfStudy = cleanList(in.FieldsOfStudy)
	in.StudyTypes = cleanList(in.StudyTypes)
	if err := in.Validate(); err != nil {
		return err
	}
	switch {
	case len(in.Concepts) == 0:
		return fault.Errorf(fault.EInvalid, "concepts: at least one concept is required")
	case len(in.Concepts) > maxConcepts:
		return fault.Errorf(fault.EInvalid, "concepts: %d concepts given, at most %d allowed", len(in.Concepts), maxConcepts)
	}
	return nil
}

// describeIntent writes an intent for a prompt.
func describeIntent(in research.ParsedIntent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Topic: %s\n", in.Topic)
	for _, c := range in.Concepts {
		fmt.Fprintf(&b, "Concept: %s", c.Term)
		if len(c.Synonyms) > 0 {
			fmt.Fprintf(&b, " (also: %s)", strings.Join(c.Synonyms, "; "))
		}
		b.WriteString("\n")
	}
	list := func(label string, xs []string) {
		if len(xs) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", label, strings.Join(xs, "; "))
		}
	}
	list("Must include", in.IncludeTerms)
	list("Exclude", in.ExcludeTerms)
	list("Fields of study", in.FieldsOfStudy)
	list("Study types", in.StudyTypes)
	if in.YearRange.From != 0 || in.YearRange.To != 0 {
		fmt.Fprintf(&b, "Years: %d to %d (0 = open)\n", in.YearRange.From, in.YearRange.To)
	}
	return b.String()
}
