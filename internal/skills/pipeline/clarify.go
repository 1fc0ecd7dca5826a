package pipeline

import (
	"context"
	"fmt"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// KindClarify is the clarifying-questions checkpoint, asked before the
// strategy is built.
const KindClarify engine.CheckpointKind = "clarify"

// ClarifyPayload is what the person sees at the clarify checkpoint: the
// question, the intent as parsed, and the questions (at most three, 2–3
// options each). An approve decision's revised data is a ClarifyDecision;
// approving without one, or rejecting, leaves the intent as parsed.
type ClarifyPayload struct {
	Question  string                        `json:"question"`
	Intent    research.ParsedIntent         `json:"intent"`
	Questions []research.ClarifyingQuestion `json:"questions"`
}

// CheckpointKind pairs this payload with its kind.
func (ClarifyPayload) CheckpointKind() engine.CheckpointKind { return KindClarify }

// ClarifyDecision is the revised data of a clarify decision: the answers
// by question ID, each an option's label or, where the question allows
// it, the person's own words.
type ClarifyDecision struct {
	Answers research.ClarifyAnswers `json:"answers"`
}

// clarifyingQuestions asks the clarifier, when the run asks clarifying
// questions, which ones the question needs. Questions that do not
// validate are dropped with a note: a clarifier's mistake should cost
// the run its questions, not the run.
func (p *pipe) clarifyingQuestions(ctx context.Context, sc engine.StepContext, intent research.ParsedIntent) ([]research.ClarifyingQuestion, error) {
	if p.sk.Clarifier == nil || !sc.Params.Bool(ParamClarify) {
		return []research.ClarifyingQuestion{}, nil
	}
	qs, err := p.sk.Clarifier.Clarify(ctx, sc.Params.String(ParamQuestion), intent)
	if err != nil {
		return nil, fmt.Errorf("find clarifying questions: %w", err)
	}
	if err := research.ValidateQuestions(qs); err != nil {
		research.AddNote(ctx, research.Note{Skill: "clarifier", Message: "no clarifying questions were asked: the ones proposed were invalid (" + fault.ErrorMessage(err) + ")"})
		return []research.ClarifyingQuestion{}, nil
	}
	if qs == nil {
		qs = []research.ClarifyingQuestion{}
	}
	return qs, nil
}

// clarifyGate asks the clarifying questions, when there are any, and
// applies the answers to the intent before the strategy is built.
func (p *pipe) clarifyGate() *engine.Gate {
	questions := func(sc engine.StepContext) []research.ClarifyingQuestion {
		qs, _, _ := engine.Get[[]research.ClarifyingQuestion](sc.State, keyClarify)
		return qs
	}
	return &engine.Gate{
		Kind:    KindClarify,
		Enabled: func(sc engine.StepContext) bool { return sc.Params.Bool(ParamClarify) && len(questions(sc)) > 0 },
		Payload: func(_ context.Context, sc engine.StepContext) (engine.Payload, error) {
			intent, err := need[research.ParsedIntent](sc.State, keyIntent)
			if err != nil {
				return nil, err
			}
			qs, err := need[[]research.ClarifyingQuestion](sc.State, keyClarify)
			if err != nil {
				return nil, err
			}
			return ClarifyPayload{Question: sc.Params.String(ParamQuestion), Intent: intent, Questions: qs}, nil
		},
		Validate: func(sc engine.StepContext, _ engine.Checkpoint, d engine.Decision) error {
			_, _, err := clarified(sc, d)
			return err
		},
		Apply: func(_ context.Context, sc engine.StepContext, _ engine.Checkpoint, d engine.Decision) (engine.Outcome, engine.Update, error) {
			intent, answered, err := clarified(sc, d)
			if err != nil || len(answered) == 0 {
				return engine.OK, nil, err
			}
			u, err := set(keyIntent, intent)
			if err != nil {
				return "", nil, err
			}
			err = noteNow(sc, u, research.Note{Skill: "clarifier", Message: fmt.Sprintf("%s answered: %s", d.DecidedBy, strings.Join(answered, "; "))})
			return engine.OK, u, err
		},
	}
}

// clarified is the intent as a clarify decision's answers make it, and
// the answers as "question: answer" lines; a reject, or an approve with
// no answers, leaves the intent as it is.
func clarified(sc engine.StepContext, d engine.Decision) (research.ParsedIntent, []string, error) {
	intent, err := need[research.ParsedIntent](sc.State, keyIntent)
	if err != nil || d.Action == engine.Reject || len(strings.TrimSpace(string(d.RevisedData))) == 0 {
		return intent, nil, err
	}
	var cd ClarifyDecision
	if err := decodeRevised(d.RevisedData, &cd, "invalid answers"); err != nil {
		return intent, nil, err
	}
	qs, err := need[[]research.ClarifyingQuestion](sc.State, keyClarify)
	if err != nil {
		return intent, nil, err
	}
	out, err := research.ApplyAnswers(intent, qs, cd.Answers)
	if err != nil {
		return intent, nil, err
	}
	var answered []string
	for _, q := range qs {
		if a := strings.TrimSpace(cd.Answers[q.ID]); a != "" {
			answered = append(answered, q.Text+" "+a)
		}
	}
	return out, answered, nil
}
