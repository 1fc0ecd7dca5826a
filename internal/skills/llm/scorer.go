package llm

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
)

// ScoreBatchSize is how many papers one scoring request carries: enough to
// keep the request count low, few enough that a model reads every abstract
// and the answer stays well under the token cap.
const ScoreBatchSize = 20

// scoreConcurrency bounds the scoring requests in flight at once, to stay
// under typical rate limits and not swamp a local model server.
const scoreConcurrency = 4

// maxAbstractChars clips abstracts in scoring prompts; the opening of an
// abstract says what a paper is about.
const maxAbstractChars = 1200

// Scorer asks a model to judge each paper's relevance to the intent, in
// batches, and keeps the offline scorer's score for every paper the model
// did not score (a failed batch, or a paper missing from an answer).
type Scorer struct {
	p        Provider
	fallback skills.Scorer
}

// NewScorer returns an LLM-backed scorer over p that falls back to
// fallback; with p == nil it returns fallback itself.
func NewScorer(p Provider, fallback skills.Scorer) skills.Scorer {
	if p == nil {
		return fallback
	}
	return &Scorer{p: p, fallback: fallback}
}

const scoreSystem = `You screen papers for a literature review. For each numbered paper, judge how relevant it is to the researcher's question.
Score from 0 to 1: 1 = squarely on the question, 0.7 = clearly relevant, 0.4 = related but off-focus, 0.1 = shares words only, 0 = unrelated or about something the researcher excluded.
Papers like those the researcher marked relevant should score higher, papers like those marked irrelevant lower.
Reply with a JSON object: {"scores": [{"n": paper number, "score": number from 0 to 1, "reason": one short line saying why}]} with one entry per paper.`

type scoreItem struct {
	N      int      `json:"n"`
	Score  *float64 `json:"score"`
	Reason string   `json:"reason"`
}

type scoreAnswer struct {
	Scores []scoreItem `json:"scores"`
}

// ScoresAlone says the model judges each paper on its own against the
// question (pipeline.AloneScorer), so a review's next page is scored
// without scoring the review's papers again.
func (s *Scorer) ScoresAlone() bool { return true }

// Score implements skills.Scorer.
func (s *Scorer) Score(ctx context.Context, in skills.ScoreInput) ([]research.ScoredPaper, error) {
	out, err := s.fallback.Score(ctx, in)
	if err != nil {
		return nil, err
	}
	if len(in.Papers) == 0 {
		return out, nil
	}
	if len(out) != len(in.Papers) {
		return nil, fault.Errorf(fault.EInternal, "fallback scorer returned %d papers for %d", len(out), len(in.Papers))
	}
	header := scoreHeader(in)
	type result struct {
		start int
		items []scoreItem
		err   error
	}
	var batches []result
	for start := 0; start < len(in.Papers); start += ScoreBatchSize {
		batches = append(batches, result{start: start})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, scoreConcurrency)
	for i := range batches {
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			papers := in.Papers[r.start:min(r.start+ScoreBatchSize, len(in.Papers))]
			ans, err := askJSON(ctx, s.p, Request{System: scoreSystem, Prompt: header + describePapers(papers), MaxTokens: DefaultMaxTokens, Schema: scoreSchema()},
				func(a *scoreAnswer) error { return checkScores(a, len(papers)) })
			r.items, r.err = ans.Scores, err
		}(&batches[i])
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var failed, missing int
	var firstErr error
	for _, r := range batches {
		n := min(ScoreBatchSize, len(in.Papers)-r.start)
		if r.err != nil {
			failed++
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		missing += n - len(r.items)
		for _, it := range r.items {
			p := &out[r.start+it.N-1]
			p.Score = *it.Score
			p.Reasons = []string{it.Reason}
		}
	}
	if failed > 0 {
		fellBack(ctx, SkillScorer, s.p, fmt.Errorf("%d of %d scoring batches failed, first: %w", failed, len(batches), firstErr))
	}
	if missing > 0 {
		research.AddNote(ctx, research.Note{Skill: SkillScorer, Message: fmt.Sprintf(
			"%s left %d of %d papers unscored; they keep the offline scorer's score", s.p.Name(), missing, len(in.Papers))})
	}
	for _, p := range out {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkScores cleans and validates one batch's answer: every entry names a
// paper of the batch once, with a score in [0,1] and a reason. Papers the
// answer leaves out are allowed (they keep the fallback's score), but an
// answer that scores none is rejected.
func checkScores(a *scoreAnswer, n int) error {
	fe := fault.FieldErrors{}
	seen := map[int]bool{}
	for i, it := range a.Scores {
		field := fmt.Sprintf("scores[%d]", i)
		switch {
		case it.N < 1 || it.N > n:
			fe.Add(field+".n", fmt.Sprintf("paper number %d is not between 1 and %d", it.N, n))
		case seen[it.N]:
			fe.Add(field+".n", fmt.Sprintf("paper %d is scored twice", it.N))
		}
		seen[it.N] = true
		switch {
		case it.Score == nil:
			fe.Add(field+".score", "score is missing")
		case math.IsNaN(*it.Score) || *it.Score < 0 || *it.Score > 1:
			fe.Add(field+".score", fmt.Sprintf("score %v is outside [0,1]", *it.Score))
		}
		a.Scores[i].Reason = clip(oneLine(it.Reason), 300)
		if a.Scores[i].Reason == "" {
			fe.Add(field+".reason", "reason is missing")
		}
	}
	if len(a.Scores) == 0 {
		fe.Add("scores", fmt.Sprintf("no paper was scored; score all %d", n))
	}
	return fe.Err("invalid scores")
}

// scoreHeader is the part of every batch's prompt that describes the
// question and the researcher's marks.
func scoreHeader(in skills.ScoreInput) string {
	var b strings.Builder
	b.WriteString(describeIntent(in.Intent))
	marked := func(label string, ps []research.RawPaper) {
		if len(ps) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", label)
		for _, p := range ps[:min(len(ps), maxMarkedInPrompt)] {
			fmt.Fprintf(&b, "  %s\n", oneLine(p.Title))
		}
	}
	marked("Papers the researcher marked relevant", in.Relevant)
	marked("Papers the researcher marked irrelevant", in.Irrelevant)
	b.WriteString("\nPapers to score:\n")
	return b.String()
}

// describePapers numbers the batch's papers from 1 for the prompt; numbers
// are shorter and harder to mangle than the papers' IDs.
func describePapers(ps []research.RawPaper) string {
	var b strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&b, "\n[%d] %s", i+1, oneLine(p.Title))
		var meta []string
		if p.Year > 0 {
			meta = append(meta, fmt.Sprint(p.Year))
		}
		if v := oneLine(p.Venue); v != "" {
			meta = append(meta, v)
		}
		if len(meta) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(meta, ", "))
		}
		b.WriteString("\n")
		if a := oneLine(p.Abstract); a != "" {
			fmt.Fprintf(&b, "Abstract: %s\n", clip(a, maxAbstractChars))
		}
	}
	return b.String()
}
