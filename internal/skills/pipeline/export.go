package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// The sets of papers a run can export, named as the export API and the
// download buttons spell them.
const (
	// ExportFinal is the final collection of a completed run, without the
	// papers the researcher marked irrelevant.
	ExportFinal = "final"
	// ExportAccumulated is the papers marked relevant so far.
	ExportAccumulated = "accumulated"
	// ExportReview is the current (or last) review list, as shown.
	ExportReview = "review"
	// ExportRelevant, ExportNotScreened and ExportIrrelevant are the three
	// sets of SetsOf: what the completed page lists apart. ExportRelevant
	// is what an export without a set holds.
	ExportRelevant    = "relevant"
	ExportNotScreened = "not_screened"
	ExportIrrelevant  = "irrelevant"
)

// ExportSets lists the export set names, for messages and forms.
func ExportSets() []string {
	return []string{ExportRelevant, ExportNotScreened, ExportIrrelevant, ExportFinal, ExportAccumulated, ExportReview}
}

// ExportRecords returns a set of a run's papers as bibliographic records
// carrying the researcher's current mark on each paper and its note, so an
// export to a reference manager keeps the screening decisions; marks are
// the run's stored current marks (store.Marks). An unknown set, or a set
// the run does not have yet (the final collection of a run still in
// progress, a review list before the first search), is EInvalid with a
// message saying what can be exported instead.
func ExportRecords(rs RunState, marks []research.Mark, set string) ([]biblio.Record, error) {
	irrelevant := make(map[string]bool, len(rs.MarkedIrrelevant))
	for _, p := range rs.MarkedIrrelevant {
		irrelevant[p.ID] = true
	}
	sets := SetsOf(rs, marks)
	var papers []research.ScoredPaper
	switch set {
	case ExportRelevant:
		papers = sets.Relevant
	case ExportNotScreened:
		papers = sets.NotScreened
	case ExportIrrelevant:
		papers = sets.Irrelevant
	case ExportFinal:
		if rs.Final == nil {
			return nil, &fault.Error{Code: fault.EInvalid,
				Message: fmt.Sprintf("the run has no final collection yet (it is still in progress); export %q or %q instead", ExportAccumulated, ExportReview),
				Fields:  map[string]string{"set": "the final collection exists once the run has completed"}}
		}
		// Runs finalised before rejected papers were left out of the
		// final collection still had them: leave them out here too.
		papers = slices.DeleteFunc(slices.Clone(rs.Final.Papers), func(p research.ScoredPaper) bool { return irrelevant[p.ID] })
	case ExportAccumulated:
		papers = rs.Workflow.AccumulatedPapers
	case ExportReview:
		if rs.Collection == nil {
			return nil, &fault.Error{Code: fault.EInvalid, Message: "the run has no review list yet: nothing has been searched",
				Fields: map[string]string{"set": "the review list exists once the first search has run"}}
		}
		papers = rs.Collection.Papers
	default:
		return nil, &fault.Error{Code: fault.EInvalid, Message: fmt.Sprintf("unknown export set %q", set),
			Fields: map[string]string{"set": "must be one of " + strings.Join(ExportSets(), ", ")}}
	}
	out := make([]biblio.Record, 0, len(papers))
	for _, p := range papers {
		rec := biblio.Record{Paper: p.RawPaper, Type: PaperType(p.RawPaper), Note: sets.Notes[p.ID]}
		switch sets.Marks[p.ID] {
		case research.MarkRelevant:
			rec.Mark = biblio.Relevant
		case research.MarkIrrelevant:
			rec.Mark = biblio.Irrelevant
		}
		out = append(out, rec)
	}
	return out, nil
}
