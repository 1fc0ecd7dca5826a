package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
)

// StepMore fetches the next page of the review's results ("Show more"):
// the review gate's More outcome goes here, and it goes back to the
// review, which raises a new checkpoint with the papers appended.
const StepMore = "more"

// MoreRequest is the revised data of a review decision that asks for the
// next page instead of deciding: {"show_more": true}, with action edit.
// It is a decision, not a side request, so the engine's one-decision-per-
// checkpoint rule makes two clicks at once fetch one page, and the
// decision and the job that fetches it commit together, so a restart
// loses neither.
type MoreRequest struct {
	ShowMore bool `json:"show_more"`
	// Feedback is what the researcher had typed in the review's feedback
	// box when they asked for more: a draft, not a decision, kept so the
	// review that comes back shows it again instead of losing it.
	Feedback string `json:"feedback,omitempty"`
}

// maxDraftFeedback bounds the draft a show-more carries, as feedback is
// bounded.
const maxDraftFeedback = 10000

// ShowMoreDecision is the decision that asks a review for its next page,
// carrying the feedback typed so far (draft, "" for none).
func ShowMoreDecision(by, draft string) engine.Decision {
	draft = strings.TrimSpace(draft)
	for len(draft) > maxDraftFeedback { // cut whole characters
		_, size := utf8.DecodeLastRuneInString(draft)
		draft = draft[:len(draft)-size]
	}
	raw, _ := json.Marshal(MoreRequest{ShowMore: true, Feedback: draft}) // cannot fail: a bool and a string
	return engine.Decision{Action: engine.Edit, RevisedData: raw, Note: "show more results", DecidedBy: by}
}

// IsShowMore reports whether a review decision asks for the next page
// rather than deciding (ShowMoreDecision).
func IsShowMore(d engine.Decision) bool {
	m, ok := moreRequest(d)
	return ok && m.ShowMore
}

// DraftOf is the feedback a show-more decision carried ("" for none, or
// for another decision).
func DraftOf(d engine.Decision) string {
	m, _ := moreRequest(d)
	return m.Feedback
}

func moreRequest(d engine.Decision) (MoreRequest, bool) {
	var m MoreRequest
	if d.Action != engine.Edit || !bytes.Contains(d.RevisedData, []byte("show_more")) {
		return m, false
	}
	dec := json.NewDecoder(bytes.NewReader(d.RevisedData))
	dec.DisallowUnknownFields()
	return m, dec.Decode(&m) == nil
}

// HasMore reports whether any source of a review's collection found more
// than it returned (research.SourceResult.HasMore): the review offers
// "Show more" only then.
func HasMore(c research.PaperCollection) bool {
	for _, r := range c.Sources {
		if r.HasMore() {
			return true
		}
	}
	return false
}

// MoreGroupLabel is the label of the group a next page's papers join
// ("More results: page 2"), so they appear together after the papers the
// researcher was already marking instead of reshuffling the themes.
func MoreGroupLabel(page int) string { return "More results: page " + strconv.Itoa(page) }

// checkMore refuses a show-more decision when nothing is left to fetch.
func checkMore(coll research.PaperCollection) error {
	if HasMore(coll) {
		return nil
	}
	return &fault.Error{Code: fault.EInvalid, Message: "nothing more to show",
		Fields: map[string]string{"show_more": "no source found more than it returned for this review"}}
}

// Deduper is a Deduplicator that can also deduplicate new records against
// records already kept: it merges duplicates among papers and drops those
// that duplicate one of known, returning only papers' own. dedup.Deduplicator
// implements it; another Deduplicator gets the fallback in against.
type Deduper interface {
	DedupAgainst(ctx context.Context, known, papers []research.RawPaper) ([]research.RawPaper, research.DedupStats, error)
}

// more fetches the next page of every query that has more, deduplicates
// the new records among themselves and against the review's papers,
// scores them with the review's (the same scorer, intent and marks, over
// the review's papers and the new ones together), and appends them to
// the collection as one group, updating each source's counts, pages and
// the iteration's history. The whole is one step: its update commits
// with the run's move back to the review, so a crash before the commit
// fetches the page again on resume and nothing is appended twice.
func (p *pipe) more(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	strategy, err := need[research.SearchStrategy](sc.State, keyStrategy)
	if err != nil {
		return "", nil, err
	}
	coll, err := need[research.PaperCollection](sc.State, keyCollection)
	if err != nil {
		return "", nil, err
	}
	s, _, err := p.searcher(sc, true)
	if err != nil {
		return "", nil, err
	}
	pager, ok := s.(skills.Pager)
	if !ok {
		return "", nil, fault.Errorf(fault.EInternal, "searcher %T cannot fetch a next page", s)
	}
	res, err := pager.SearchMore(inSelection(ctx, sc, strategy, nil), strategy, coll.Sources)
	if err != nil {
		return "", nil, fmt.Errorf("show more: %w", err)
	}
	var found []research.RawPaper
	for _, paper := range res.Papers {
		if err := paper.Validate(); err != nil {
			nb.add(research.Note{Skill: "search", Message: fmt.Sprintf("dropped a record from %s: %s", paper.Source, fault.ErrorMessage(err))})
			continue
		}
		found = append(found, paper)
	}
	known := raw(coll.Papers)
	fresh, stats, err := p.dedupAgainst(ctx, known, found)
	if err != nil {
		return "", nil, fmt.Errorf("show more: deduplicate: %w", err)
	}
	scored, err := p.scoreWith(ctx, sc, known, fresh)
	if err != nil {
		return "", nil, err
	}
	out := coll
	out.Papers = append(slices.Clone(coll.Papers), scored...)
	out.Groups = slices.Clone(coll.Groups)
	out.Sources = make(map[string]research.SourceResult, len(coll.Sources))
	page := 1
	for name, r := range coll.Sources {
		if pr, ok := res.Sources[name]; ok {
			r = r.WithPage(pr)
		}
		out.Sources[name] = r
		page = max(page, r.Pages())
	}
	if len(scored) > 0 {
		ids := make([]string, len(scored))
		for i, paper := range scored {
			ids[i] = paper.ID
		}
		out.Groups = append(out.Groups, research.Group{Label: MoreGroupLabel(page), PaperIDs: ids})
	}
	out.Dedup = research.DedupStats{Input: coll.Dedup.Input + stats.Input, Output: coll.Dedup.Output + stats.Output,
		Merged: coll.Dedup.Merged + stats.Merged, Related: coll.Dedup.Related + stats.Related}
	if err := out.Validate(); err != nil {
		return "", nil, fmt.Errorf("show more: the collection is invalid: %w", err)
	}
	wfs, _, err := engine.Get[research.WorkflowState](sc.State, keyWorkflow)
	if err != nil {
		return "", nil, err
	}
	if n := len(wfs.History); n > 0 && wfs.History[n-1].Iteration == sc.Iteration {
		h := &wfs.History[n-1]
		h.ResultCount, h.Sources, h.Dedup = len(out.Papers), out.Sources, out.Dedup
	}
	nb.add(research.Note{Skill: "search", Message: fmt.Sprintf("iteration %d: showed more (page %d): %d new papers of %d records fetched, %d already in the review",
		sc.Iteration, page, len(scored), len(found), len(found)-len(scored))})
	u, err := set(keyCollection, out, keyWorkflow, wfs)
	return engine.OK, u, err
}

// dedupAgainst returns the papers of found that are not already among
// known, duplicates among them merged, with IDs unique against known.
func (p *pipe) dedupAgainst(ctx context.Context, known, found []research.RawPaper) ([]research.RawPaper, research.DedupStats, error) {
	var fresh []research.RawPaper
	var stats research.DedupStats
	var err error
	if d, ok := p.sk.Dedup.(Deduper); ok {
		fresh, stats, err = d.DedupAgainst(ctx, known, found)
	} else {
		fresh, stats, err = p.sk.Dedup.Dedup(ctx, found)
		fresh = slices.DeleteFunc(fresh, func(n research.RawPaper) bool {
			return slices.ContainsFunc(known, func(k research.RawPaper) bool { return sameWork(k, n) })
		})
		stats.Output = len(fresh)
		stats.Merged = stats.Input - stats.Output
	}
	if err != nil {
		return nil, stats, err
	}
	taken := make(map[string]bool, len(known)+len(fresh))
	for _, k := range known {
		taken[k.ID] = true
	}
	for i := range fresh {
		if err := fresh[i].Validate(); err != nil {
			return nil, stats, fmt.Errorf("the deduplicator returned an invalid paper: %w", err)
		}
		base := fresh[i].ID
		for k := 2; taken[fresh[i].ID]; k++ {
			fresh[i].ID = base + "~" + strconv.Itoa(k)
		}
		taken[fresh[i].ID] = true
	}
	return fresh, stats, nil
}

// sameWork is the fallback's test for a record already in the review:
// the same ID, DOI or normalised title.
func sameWork(a, b research.RawPaper) bool {
	switch {
	case a.ID != "" && a.ID == b.ID:
		return true
	case a.DOI != "" && strings.EqualFold(a.DOI, b.DOI):
		return true
	}
	return research.NormalizeTitle(a.Title) != "" && research.NormalizeTitle(a.Title) == research.NormalizeTitle(b.Title)
}

// AloneScorer is a Scorer that judges each paper on its own (a model
// reading it against the question), not against the others it is given,
// so a next page's papers are scored without the review's again, which
// for a model would cost a request per batch of papers already scored.
// llm.Scorer implements it.
type AloneScorer interface {
	ScoresAlone() bool
}

// scoreWith scores fresh as the score step scored the review's papers:
// the same scorer, intent and marks, over known and fresh together (the
// offline scorer's index is the papers it sees; an AloneScorer gets fresh
// alone), and returns fresh's scores, best first; the review's papers
// keep theirs.
func (p *pipe) scoreWith(ctx context.Context, sc engine.StepContext, known, fresh []research.RawPaper) ([]research.ScoredPaper, error) {
	if len(fresh) == 0 {
		return nil, nil
	}
	intent, err := need[research.ParsedIntent](sc.State, keyIntent)
	if err != nil {
		return nil, err
	}
	wfs, irrelevant, err := marks(sc.State)
	if err != nil {
		return nil, err
	}
	in := skills.ScoreInput{Intent: intent, Papers: append(slices.Clone(known), fresh...), Relevant: raw(wfs.AccumulatedPapers), Irrelevant: raw(irrelevant)}
	if a, ok := p.sk.Scorer.(AloneScorer); ok && a.ScoresAlone() {
		in.Papers = slices.Clone(fresh)
	}
	all, err := p.sk.Scorer.Score(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("show more: score: %w", err)
	}
	if len(all) != len(in.Papers) {
		return nil, fault.Errorf(fault.EInternal, "the scorer returned %d papers for %d", len(all), len(in.Papers))
	}
	want := make(map[string]bool, len(fresh))
	for _, f := range fresh {
		want[f.ID] = true
	}
	var out []research.ScoredPaper
	for _, paper := range all {
		if want[paper.ID] {
			if err := paper.Validate(); err != nil {
				return nil, fmt.Errorf("the scorer returned an invalid paper: %w", err)
			}
			want[paper.ID] = false
			out = append(out, paper)
		}
	}
	slices.SortStableFunc(out, func(a, b research.ScoredPaper) int { return cmp.Compare(b.Score, a.Score) })
	return out, nil
}
