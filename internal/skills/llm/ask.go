package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// maxFeedbackChars bounds how much of a rejected answer and its error is fed
// back on the retry, so one runaway answer cannot double the next prompt.
const maxFeedbackChars = 2000

// askJSON asks p for a JSON object, decodes it into a T and checks it with
// check. An answer that is not JSON or fails check is retried exactly once,
// with the problem quoted in the prompt so the model can correct it. A
// provider error is not retried here: the provider already retried it.
func askJSON[T any](ctx context.Context, p Provider, r Request, check func(*T) error) (T, error) {
	r.JSON = true
	var zero T
	answer, err := p.Complete(ctx, r)
	if err != nil {
		return zero, err
	}
	v, problem := decodeChecked(answer, check)
	if problem == nil {
		return v, nil
	}
	retry := r
	retry.Prompt = r.Prompt + "\n\n" + retryNote(answer, problem)
	answer, err = p.Complete(ctx, retry)
	if err != nil {
		return zero, err
	}
	v, problem2 := decodeChecked(answer, check)
	if problem2 != nil {
		return zero, fault.Errorf(fault.EInvalid, "answer rejected twice: first %v; then %v", problem, problem2)
	}
	return v, nil
}

// retryNote is the paragraph appended to the prompt on the retry.
func retryNote(answer string, problem error) string {
	return fmt.Sprintf("Your previous answer was rejected.\nPrevious answer:\n%s\nValidation error: %s\nAnswer again with one corrected JSON object only.",
		clip(answer, maxFeedbackChars), clip(problem.Error(), maxFeedbackChars))
}

func decodeChecked[T any](answer string, check func(*T) error) (T, error) {
	var v T
	raw, err := extractJSON(answer)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fault.Errorf(fault.EInvalid, "the answer is not the JSON object asked for: %v", err)
	}
	if err := check(&v); err != nil {
		return v, err
	}
	return v, nil
}

// extractJSON returns the JSON object in answer: the answer itself, or the
// object inside Markdown fences or surrounding prose, which models add even
// when told not to.
func extractJSON(answer string) ([]byte, error) {
	s := strings.TrimSpace(answer)
	if s == "" {
		return nil, fault.Errorf(fault.EInvalid, "the answer is empty; a JSON object was asked for")
	}
	start, end := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if start < 0 || end < start {
		// Quoted, so a model declining in prose reads as such in the
		// run's notes.
		return nil, fault.Errorf(fault.EInvalid, "the answer contains no JSON object; it reads %q", clip(oneLine(s), 200))
	}
	raw := []byte(s[start : end+1])
	if !json.Valid(raw) {
		var probe any
		err := json.NewDecoder(bytes.NewReader(raw)).Decode(&probe)
		return nil, fault.Errorf(fault.EInvalid, "the answer is not valid JSON: %v", err)
	}
	return raw, nil
}

// fellBack records that skill used its offline variant because of err, so
// the run can show the researcher that the answer is not the model's.
func fellBack(ctx context.Context, skill string, p Provider, err error) {
	research.AddNote(ctx, research.Note{
		Skill:   skill,
		Message: fmt.Sprintf("%s could not be used (%s); the offline %s was used instead", p.Name(), clip(err.Error(), 500), strings.ReplaceAll(skill, "_", " ")),
	})
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// oneLine collapses whitespace, so a reason or term from a model reads as
// one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cleanList trims, collapses and de-duplicates (case-insensitively) a list
// of terms from a model, dropping empty ones.
func cleanList(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = oneLine(s)
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}
