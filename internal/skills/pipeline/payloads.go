package pipeline

import (
	"quarry/internal/engine"
	"quarry/internal/research"
)

// The search workflow's two checkpoints. They are the workflow's, not the
// engine's: the engine knows only that a person is asked something.
const (
	KindStrategyConfirmation engine.CheckpointKind = "strategy_confirmation"
	KindResultReview         engine.CheckpointKind = "result_review"
)

// StrategyPayload is what the researcher sees at checkpoint 1 (strategy
// confirmation): the parsed intent and the proposed strategy. An edit
// decision's revised data is a SearchStrategy.
type StrategyPayload struct {
	Intent    research.ParsedIntent   `json:"intent"`
	Strategy  research.SearchStrategy `json:"strategy"`
	Iteration int                     `json:"iteration"`
	// Findings are the strategy review's (ReviewStrategy), each saying
	// whether it blocks approval at this iteration; checkpoints recorded
	// before the review existed have none.
	Findings []research.Finding `json:"findings"`
	// QualityGate says whether blocking findings refuse an approval
	// without a note (the run's quality_gate parameter); without it every
	// finding is a warning.
	QualityGate bool `json:"quality_gate"`
}

// CheckpointKind pairs this payload with its kind.
func (StrategyPayload) CheckpointKind() engine.CheckpointKind {
	return KindStrategyConfirmation
}

// ResultPayload is what the researcher sees at checkpoint 2 (result
// review): this iteration's organised collection and the papers accumulated
// so far. An edit or reject decision's revised data is a UserFeedback.
type ResultPayload struct {
	Collection        research.PaperCollection `json:"collection"`
	AccumulatedPapers []research.ScoredPaper   `json:"accumulated_papers"`
	Iteration         int                      `json:"iteration"`
}

// CheckpointKind pairs this payload with its kind.
func (ResultPayload) CheckpointKind() engine.CheckpointKind { return KindResultReview }

// PaperIDs lists the papers the review shows (this iteration's
// collection), which the store records as the papers the run showed, so a
// paper's page can list the runs it appeared in.
func (p ResultPayload) PaperIDs() []string {
	ids := make([]string, len(p.Collection.Papers))
	for i, sp := range p.Collection.Papers {
		ids[i] = sp.ID
	}
	return ids
}
