package intent

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"quarry/internal/research"
)

// acronymExpansions are short all-caps terms that stand for several
// different things in the literature, each with its common expansions
// (at most three: a question offers at most three options). It is kept
// small and across fields on purpose: an acronym with one reading is the
// synonym table's business, not a question to ask.
func acronymExpansions() map[string][]string {
	return map[string][]string{
		"AD":  {"Alzheimer's disease", "atopic dermatitis", "anomaly detection"},
		"ASD": {"autism spectrum disorder", "atrial septal defect"},
		"CAD": {"coronary artery disease", "computer-aided design", "computer-aided diagnosis"},
		"CBT": {"cognitive behavioural therapy", "computer-based training"},
		"CF":  {"cystic fibrosis", "collaborative filtering"},
		"ED":  {"emergency department", "eating disorder", "erectile dysfunction"},
		"IR":  {"information retrieval", "infrared", "insulin resistance"},
		"MI":  {"myocardial infarction", "motivational interviewing", "mutual information"},
		"MS":  {"multiple sclerosis", "mass spectrometry"},
		"NLP": {"natural language processing", "neuro-linguistic programming"},
		"PD":  {"Parkinson's disease", "peritoneal dialysis", "personality disorder"},
		"PE":  {"pulmonary embolism", "physical education", "physical exercise"},
		"PPI": {"proton pump inhibitor", "protein-protein interaction"},
		"RL":  {"reinforcement learning", "representation learning"},
		"SLR": {"systematic literature review", "single-lens reflex"},
	}
}

// peopleFields are the fields of study whose questions are usually about
// a group of people, where leaving the group out is a real ambiguity.
var peopleFields = []string{"Medicine", "Psychology", "Education", "Sociology"}

// populationWords name a group of people; a question using one has said
// whom it is about.
var populationWords = regexp.MustCompile(`(?i)\b(?:child|children|childhood|kids?|infants?|newborns?|neonat\w*|toddlers?|adolescen\w*|teen\w*|youths?|young people|students?|pupils?|adults?|elderly|older (?:people|persons|adults)|aged|seniors?|women|woman|men|man|girls?|boys?|mothers?|fathers?|parents?|pregnan\w*|veterans?|employees?|workers?|nurses?|physicians?|doctors?|clinicians?|teachers?|caregivers?|carers?|residents?|paediatric|pediatric|geriatric)\b`)

var acronymToken = regexp.MustCompile(`\b[A-Z]{2,5}\b`)

// Clarify implements skills.Clarifier offline. It asks only what the
// question leaves open and a search depends on: what an acronym with
// several readings stands for (unless the question spells one out), whom
// a question about people is about (when it names no group), and which
// years (when it names none); at most three questions, in that order.
func (p *Parser) Clarify(ctx context.Context, question string, in research.ParsedIntent) ([]research.ClarifyingQuestion, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var qs []research.ClarifyingQuestion
	lower := strings.ToLower(question)
	table := acronymExpansions()
	seen := map[string]bool{}
	for _, tok := range acronymToken.FindAllString(question, -1) {
		exp, ok := table[tok]
		if !ok || seen[tok] || slices.ContainsFunc(exp, func(e string) bool { return strings.Contains(lower, strings.ToLower(e)) }) {
			continue
		}
		seen[tok] = true
		q := research.ClarifyingQuestion{ID: "acronym-" + strings.ToLower(tok), Kind: research.ClarifyAcronym, Term: tok, Other: true,
			Text: "What does " + tok + " stand for in your question?"}
		for _, e := range exp[:min(len(exp), research.MaxClarifyOptions)] {
			q.Options = append(q.Options, research.ClarifyOption{Label: e, Value: e})
		}
		qs = append(qs, q)
	}
	aboutPeople := slices.ContainsFunc(in.FieldsOfStudy, func(f string) bool { return slices.Contains(peopleFields, f) })
	if aboutPeople && !populationWords.MatchString(question) {
		qs = append(qs, research.ClarifyingQuestion{ID: "population", Kind: research.ClarifyPopulation, Other: true,
			Text: "Whom is the question about?",
			Options: []research.ClarifyOption{
				{Label: "Children and adolescents", Value: "children"},
				{Label: "Adults", Value: "adults"},
				{Label: "Any age group"},
			}})
	}
	if in.YearRange == (research.YearRange{}) {
		now := p.now().Year()
		qs = append(qs, research.ClarifyingQuestion{ID: "time_frame", Kind: research.ClarifyTimeFrame, Other: true,
			Text: "Which publication years should the search cover?",
			Options: []research.ClarifyOption{
				{Label: "The last 5 years", YearRange: research.YearRange{From: now - 5, To: now}},
				{Label: "The last 10 years", YearRange: research.YearRange{From: now - 10, To: now}},
				{Label: "Any year"},
			}})
	}
	return qs[:min(len(qs), research.MaxClarifyingQuestions)], nil
}
