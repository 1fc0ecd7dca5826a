package research

import (
	"fmt"
	"slices"
	"strings"
)

// Severity is how much a review finding matters (issue 18 §6, the quality
// gate whose strictness relaxes by iteration): a MUST is a defect the
// search cannot be trusted with, a SHOULD a weakness most reviewers
// would fix, a COULD a suggestion.
type Severity string

// The three severities, strictest first.
const (
	SeverityMust   Severity = "MUST"
	SeverityShould Severity = "SHOULD"
	SeverityCould  Severity = "COULD"
)

// Severities lists every severity, strictest first, for validation and
// exhaustive tests.
func Severities() []Severity { return []Severity{SeverityMust, SeverityShould, SeverityCould} }

// Valid reports whether s is one of the three severities.
func (s Severity) Valid() bool { return slices.Contains(Severities(), s) }

// Blocks reports whether a finding of severity s blocks approval at the
// given iteration (counted from 1). Early on a reviewer insists on
// everything; the longer the search has been refined, the more a
// remaining suggestion is a judgement the person has already made, so
// only defects keep blocking: iterations 1–2 block every finding, 3–4
// block MUST and SHOULD, and from 5 on only MUST blocks. An iteration
// below 1 counts as 1; an unknown severity always blocks, so a finding
// is never waved through because it was mislabelled.
func (s Severity) Blocks(iteration int) bool {
	switch {
	case s == SeverityMust || !s.Valid():
		return true
	case s == SeverityShould:
		return iteration <= 4
	default: // COULD
		return iteration <= 2
	}
}

// Finding is one problem a review found in a search strategy, as the
// strategy checkpoint shows it and the API returns it.
type Finding struct {
	// Rule names the check that found it (e.g. "query_no_results"), so
	// clients can tell findings apart without parsing the message.
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Message says what is wrong and how to fix it, for a person.
	Message string `json:"message"`
	// Field is the strategy field it concerns, in the form's error keys
	// ("queries[1].text", "year_range.from"), "" for the whole strategy.
	Field string `json:"field,omitempty"`
	// Blocks says whether it blocks approval at the checkpoint's
	// iteration (Severity.Blocks), set by WithBlocks.
	Blocks bool `json:"blocks"`
}

// WithBlocks returns the findings with Blocks set for the iteration, when
// the gate is enforced; when it is not, every finding is a warning.
func WithBlocks(fs []Finding, iteration int, enforced bool) []Finding {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Blocks = enforced && out[i].Severity.Blocks(iteration)
	}
	return out
}

// Blocking returns the findings that block (Blocks set).
func Blocking(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Blocks {
			out = append(out, f)
		}
	}
	return out
}

// BlockingSummary says in one line which findings block approval at an
// iteration, for the refusal message and the override's note.
func BlockingSummary(fs []Finding, iteration int) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, string(f.Severity)+": "+strings.TrimSuffix(f.Message, "."))
	}
	n := "finding blocks"
	if len(fs) != 1 {
		n = "findings block"
	}
	return fmt.Sprintf("%d %s approval at iteration %d (%s)", len(fs), n, iteration, strings.Join(parts, "; "))
}
