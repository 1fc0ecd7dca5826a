package llm

import (
	"context"
	"slices"
	"strings"

	"quarry/internal/research"
	"quarry/internal/skills"
)

// SkillClarifier names the clarifier in notes.
const SkillClarifier = "clarifier"

// Clarifier asks a model which clarifying questions an ambiguous research
// question needs, in the structure the offline heuristics use
// (research.ClarifyingQuestion), and falls back to those heuristics when
// the model fails or twice answers something that does not validate.
type Clarifier struct {
	p        Provider
	fallback skills.Clarifier
}

// NewClarifier returns an LLM-backed clarifier over p that falls back to
// fallback; with no provider it returns fallback itself.
func NewClarifier(p Provider, fallback skills.Clarifier) skills.Clarifier {
	if p == nil {
		return fallback
	}
	return &Clarifier{p: p, fallback: fallback}
}

const clarifySystem = `You help researchers search the scholarly literature. Before a search strategy is built, you decide whether the research question is ambiguous in a way that changes what should be searched, and if so ask the researcher at most 3 short multiple-choice questions.
Ask only about: an acronym with several common readings that the question does not spell out (kind "acronym", with "term" the acronym and each option's "value" an expansion); the group of people a question about people leaves open (kind "population", each option's "value" the group as a search term, "" for any); the publication years when none are given (kind "time_frame", each option's "year_range" {"from": int, "to": int}, 0 for open); or a missing focus (kind "concept", each option's "value" a search term, "" for none).
Reply with a JSON object: {"questions": [{"id": string, unique; "kind": string; "text": string, the question; "term": string, for an acronym; "options": [{"label": string, what the researcher reads; "value": string; "year_range": {"from": int, "to": int}}], 2 or 3 options; "other": bool, true when the researcher may type their own answer}]}.
Reply {"questions": []} when the question is clear.`

// clarifyAnswer is the model's answer.
type clarifyAnswer struct {
	Questions []research.ClarifyingQuestion `json:"questions"`
}

// Clarify implements skills.Clarifier.
func (c *Clarifier) Clarify(ctx context.Context, question string, in research.ParsedIntent) ([]research.ClarifyingQuestion, error) {
	q := strings.TrimSpace(question)
	prompt := "Research question: " + q + "\n\nAs parsed:\n" + describeIntent(in)
	a, err := askJSON(ctx, c.p, Request{System: clarifySystem, Prompt: prompt, MaxTokens: 1024, Schema: clarifySchema()},
		func(a *clarifyAnswer) error { return checkQuestions(a) })
	if err == nil {
		return a.Questions, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	fellBack(ctx, SkillClarifier, c.p, err)
	return c.fallback.Clarify(ctx, question, in)
}

// questionID makes a model's question ID safe in a form's field names
// and element IDs: lower case letters, digits, "_" and "-", the rest
// "-" (two IDs made the same are then refused as duplicates).
func questionID(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '-'
	}, strings.ToLower(strings.TrimSpace(id)))
}

// checkQuestions cleans a model's questions in place (one-line texts and
// labels, an acronym's term trimmed) and validates them: at most three
// questions of a known kind with two or three distinct options each.
func checkQuestions(a *clarifyAnswer) error {
	for i := range a.Questions {
		q := &a.Questions[i]
		q.ID, q.Kind, q.Text, q.Term = questionID(q.ID), strings.ToLower(oneLine(q.Kind)), oneLine(q.Text), oneLine(q.Term)
		for j := range q.Options {
			q.Options[j].Label, q.Options[j].Value = oneLine(q.Options[j].Label), oneLine(q.Options[j].Value)
		}
	}
	a.Questions = slices.Clip(a.Questions)
	return research.ValidateQuestions(a.Questions)
}
