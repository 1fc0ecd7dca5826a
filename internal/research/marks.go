package research

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/fault"
)

// The three marks a researcher gives a paper in a review.
const (
	MarkRelevant   = "relevant"
	MarkIrrelevant = "irrelevant"
	MarkUnsure     = "unsure"
)

// MaxMarkReason is the longest exclusion reason, in characters: a reason is
// a short label ("population", "study design"), not a note.
const MaxMarkReason = 200

// DefaultExclusionReasons are the usual reasons to exclude a paper in
// screening (the PICO elements, the study's design and language, a
// duplicate), which the review offers unless a deployment configures its
// own list.
func DefaultExclusionReasons() []string {
	return []string{"population", "intervention", "comparator", "outcome", "study design", "language", "duplicate", "other"}
}

// Mark is one screening decision on one paper of a run, made the moment a
// person clicks, so it survives reloads and restarts. Every mark is kept;
// a paper's current mark is its latest.
type Mark struct {
	PaperID string `json:"paper_id"`
	// Mark is relevant, irrelevant or unsure.
	Mark string `json:"mark"`
	// Note is the researcher's note on the paper ("" for none).
	Note string `json:"note"`
	// Reason is why a paper marked irrelevant is excluded ("" for none).
	Reason string `json:"reason"`
	// By and At say who marked the paper and when; Iteration is the
	// review it was marked in.
	By        string    `json:"marked_by"`
	At        time.Time `json:"marked_at"`
	Iteration int       `json:"iteration"`
	// Resolves marks the decision of a dual-screening conflict (see
	// Screen), not a reviewer's own screening.
	Resolves bool `json:"resolves,omitempty"`
}

// Normalize trims the mark's text fields.
func (m Mark) Normalize() Mark {
	m.Mark = strings.ToLower(strings.TrimSpace(m.Mark))
	m.Note, m.Reason = strings.TrimSpace(m.Note), strings.TrimSpace(m.Reason)
	return m
}

// Validate reports every bad field at once: an unknown mark, a note or
// reason too long, a reason on a paper not marked irrelevant (it would be
// stored without meaning anything).
func (m Mark) Validate() error {
	fe := fault.FieldErrors{}
	checkPaperID(fe, "paper_id", m.PaperID)
	switch m.Mark {
	case MarkRelevant, MarkIrrelevant, MarkUnsure:
	case "":
		fe.Add("mark", fmt.Sprintf("is required: %s, %s or %s", MarkRelevant, MarkIrrelevant, MarkUnsure))
	default:
		fe.Add("mark", fmt.Sprintf("%q is not a mark; choose %s, %s or %s", m.Mark, MarkRelevant, MarkIrrelevant, MarkUnsure))
	}
	if n := utf8.RuneCountInString(m.Note); n > MaxPaperNote {
		fe.Add("note", fmt.Sprintf("the note has %d characters; at most %d", n, MaxPaperNote))
	}
	if n := utf8.RuneCountInString(m.Reason); n > MaxMarkReason {
		fe.Add("reason", fmt.Sprintf("the reason has %d characters; at most %d", n, MaxMarkReason))
	} else if m.Reason != "" && m.Mark != MarkIrrelevant && m.Mark != "" {
		fe.Add("reason", "only a paper marked irrelevant has an exclusion reason")
	}
	return fe.Err("invalid mark")
}

// Same reports whether m and o say the same thing about the paper (who
// and when aside), so an unchanged mark need not be stored again.
func (m Mark) Same(o Mark) bool {
	return m.PaperID == o.PaperID && m.Mark == o.Mark && m.Note == o.Note && m.Reason == o.Reason
}
