package research

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/fault"
)

// Clarifying questions (issue 18 §6): when a question is ambiguous, a run
// may ask a few short multiple-choice questions before it builds the
// strategy, and the answers change the intent. What each kind of question
// changes is fixed here, so questions from the offline heuristics and
// from a model are applied the same way.

// Limits on the questions one run asks: few enough to answer at a glance.
const (
	MaxClarifyingQuestions = 3
	MinClarifyOptions      = 2
	MaxClarifyOptions      = 3
)

// The kinds of clarifying question, each with what its answer changes.
const (
	// ClarifyPopulation: the answer's value is a group of people the
	// question is about, added as a concept ("" for any population).
	ClarifyPopulation = "population"
	// ClarifyTimeFrame: the answer's year range becomes the intent's
	// (an open range for any time).
	ClarifyTimeFrame = "time_frame"
	// ClarifyAcronym: the answer's value is what the acronym Term stands
	// for; the concept spelt as the acronym becomes the expansion, with
	// the acronym as its synonym.
	ClarifyAcronym = "acronym"
	// ClarifyConcept: the answer's value is a narrower idea added as a
	// concept ("" for none), for a question whose focus is unclear.
	ClarifyConcept = "concept"
)

// ClarifyKinds lists the kinds, for validation and prompts.
func ClarifyKinds() []string {
	return []string{ClarifyPopulation, ClarifyTimeFrame, ClarifyAcronym, ClarifyConcept}
}

// ClarifyOption is one answer a person can pick.
type ClarifyOption struct {
	Label string `json:"label"`
	// Value is what the answer adds or substitutes (see the kinds).
	Value string `json:"value,omitempty"`
	// YearRange is a time-frame answer's years.
	YearRange YearRange `json:"year_range,omitzero"`
}

// ClarifyingQuestion is one question with its options.
type ClarifyingQuestion struct {
	// ID names the question among the run's (answers are keyed by it).
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Term is the acronym an acronym question is about.
	Term    string          `json:"term,omitempty"`
	Options []ClarifyOption `json:"options"`
	// Other lets the person type an answer of their own instead.
	Other bool `json:"other,omitempty"`
}

// ValidateQuestions checks a set of questions: at most
// MaxClarifyingQuestions, each with a known kind, a unique ID, text, and
// 2–3 options with distinct non-empty labels (and a term for an acronym).
func ValidateQuestions(qs []ClarifyingQuestion) error {
	fe := fault.FieldErrors{}
	if len(qs) > MaxClarifyingQuestions {
		fe.Add("questions", fmt.Sprintf("%d questions, at most %d", len(qs), MaxClarifyingQuestions))
	}
	ids := map[string]bool{}
	for i, q := range atMost(qs, MaxClarifyingQuestions) {
		p := fmt.Sprintf("questions[%d]", i)
		switch {
		case strings.TrimSpace(q.ID) == "":
			fe.Add(p+".id", "is required")
		case ids[q.ID]:
			fe.Add(p+".id", fmt.Sprintf("%q is used twice", q.ID))
		}
		ids[q.ID] = true
		if !slices.Contains(ClarifyKinds(), q.Kind) {
			fe.Add(p+".kind", fmt.Sprintf("%q is not one of %s", q.Kind, strings.Join(ClarifyKinds(), ", ")))
		}
		if strings.TrimSpace(q.Text) == "" {
			fe.Add(p+".text", "is required")
		}
		if q.Kind == ClarifyAcronym && strings.TrimSpace(q.Term) == "" {
			fe.Add(p+".term", "an acronym question names its acronym")
		}
		if n := len(q.Options); n < MinClarifyOptions || n > MaxClarifyOptions {
			fe.Add(p+".options", fmt.Sprintf("%d options, %d to %d are asked for", n, MinClarifyOptions, MaxClarifyOptions))
		}
		labels := map[string]bool{}
		for j, o := range atMost(q.Options, MaxClarifyOptions) {
			l := strings.ToLower(strings.TrimSpace(o.Label))
			switch {
			case l == "":
				fe.Add(fmt.Sprintf("%s.options[%d].label", p, j), "is required")
			case labels[l]:
				fe.Add(fmt.Sprintf("%s.options[%d].label", p, j), fmt.Sprintf("%q is used twice", o.Label))
			}
			labels[l] = true
			o.YearRange.Validate(fe, fmt.Sprintf("%s.options[%d].year_range", p, j))
		}
	}
	return fe.Err("invalid clarifying questions")
}

// ClarifyAnswers are a person's answers by question ID: an option's label,
// or their own words where the question allows them. A question left out
// (or answered "") changes nothing.
type ClarifyAnswers map[string]string

// ApplyAnswers returns the intent as the answers make it. An answer that
// names no option of its question, to a question that takes no answer of
// the person's own, or to no question asked, is EInvalid with a field
// error per answer, so a typo is not silently ignored.
func ApplyAnswers(in ParsedIntent, qs []ClarifyingQuestion, answers ClarifyAnswers) (ParsedIntent, error) {
	fe := fault.FieldErrors{}
	out := in
	out.Concepts = slices.Clone(in.Concepts)
	for id := range answers {
		if !slices.ContainsFunc(qs, func(q ClarifyingQuestion) bool { return q.ID == id }) {
			fe.Add("answers."+id, "no such question was asked")
		}
	}
	for _, q := range qs {
		a := strings.TrimSpace(answers[q.ID])
		if a == "" {
			continue
		}
		opt, ok := q.option(a)
		if !ok && !q.Other {
			labels := make([]string, len(q.Options))
			for i, o := range q.Options {
				labels[i] = strconv.Quote(o.Label)
			}
			fe.Add("answers."+q.ID, fmt.Sprintf("%q is not one of %s", a, strings.Join(labels, ", ")))
			continue
		}
		if !ok {
			if opt, ok = otherOption(q.Kind, a); !ok {
				fe.Add("answers."+q.ID, fmt.Sprintf("%q names no year: give the years, e.g. 2015-2020, or choose an option", a))
				continue
			}
		}
		out = q.apply(out, opt)
	}
	if err := fe.Err("invalid answers"); err != nil {
		return in, err
	}
	return out, out.Validate()
}

// option finds the option a person chose by its label (or value).
func (q ClarifyingQuestion) option(answer string) (ClarifyOption, bool) {
	for _, o := range q.Options {
		if strings.EqualFold(strings.TrimSpace(o.Label), answer) {
			return o, true
		}
	}
	return ClarifyOption{}, false
}

var yearsIn = regexp.MustCompile(`\b(1[89]\d\d|2[01]\d\d)\b`)

// otherOption reads an answer in the person's own words: for a time frame
// the years it names (one year: from then on; none: not ok), otherwise
// the words.
func otherOption(kind, answer string) (ClarifyOption, bool) {
	o := ClarifyOption{Label: answer, Value: answer}
	if kind == ClarifyTimeFrame {
		ys := yearsIn.FindAllString(answer, 2)
		if len(ys) == 0 {
			return o, false
		}
		o.YearRange.From, _ = strconv.Atoi(ys[0])
		if len(ys) > 1 {
			o.YearRange.To, _ = strconv.Atoi(ys[1])
			if o.YearRange.From > o.YearRange.To {
				o.YearRange.From, o.YearRange.To = o.YearRange.To, o.YearRange.From
			}
		}
	}
	return o, true
}

// apply changes the intent as one chosen option says.
func (q ClarifyingQuestion) apply(in ParsedIntent, o ClarifyOption) ParsedIntent {
	v := strings.Join(strings.Fields(o.Value), " ")
	switch q.Kind {
	case ClarifyTimeFrame:
		in.YearRange = o.YearRange
	case ClarifyAcronym:
		if v == "" {
			return in
		}
		for i, c := range in.Concepts {
			if sameTerm(c.Term, q.Term) {
				syn := []string{c.Term}
				for _, s := range c.Synonyms {
					if !sameTerm(s, v) {
						syn = append(syn, s)
					}
				}
				in.Concepts[i] = Concept{Term: v, Synonyms: syn}
				return in
			}
		}
		in.Concepts = append(in.Concepts, Concept{Term: v, Synonyms: []string{q.Term}})
	default: // population, concept: add the idea unless it is there
		if v != "" && !slices.ContainsFunc(in.Concepts, func(c Concept) bool { return sameTerm(c.Term, v) }) {
			in.Concepts = append(in.Concepts, Concept{Term: v})
		}
	}
	return in
}
