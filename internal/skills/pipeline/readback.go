package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"quarry/internal/engine"
)

// readBacks are the search steps' postconditions on what they write: the
// store reads each step's papers back inside the transaction that
// commits them and rolls the step back unless they are the papers the
// step wrote, in order (then the step is retried, then a person asked,
// as for any failed attempt).
func readBacks() map[string][]engine.ReadBack {
	papers := func(key string, inObject bool) []engine.ReadBack {
		return []engine.ReadBack{{Name: key + " reads back as written", Check: func(ctx context.Context, w engine.Written, u engine.Update) error {
			return samePapers(ctx, w, u, key, inObject)
		}}}
	}
	return map[string][]engine.ReadBack{
		nativePrefix + StepSearch:   papers(keySearch, true),
		nativePrefix + StepDedup:    papers(keyDeduped, false),
		nativePrefix + StepScore:    papers(keyScored, false),
		nativePrefix + StepOrganize: papers(keyCollection, true),
		nativePrefix + StepMore:     papers(keyCollection, true),
		nativePrefix + StepFinalize: papers(keyFinal, true),
	}
}

// samePapers compares the papers' IDs under key in the step's update with
// those the transaction holds: a list of papers, or an object's papers.
func samePapers(ctx context.Context, w engine.Written, u engine.Update, key string, inObject bool) error {
	wrote, ok := u[key]
	if !ok {
		return nil // the step did not write it this time
	}
	stored, ok, err := w.State(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s was written but is not stored", key)
	}
	want, err := paperIDs(wrote, inObject)
	if err != nil {
		return fmt.Errorf("%s as written: %w", key, err)
	}
	got, err := paperIDs(stored, inObject)
	if err != nil {
		return fmt.Errorf("%s as stored: %w", key, err)
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d papers written, %d stored", key, len(want), len(got))
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: the stored papers are not the ones written", key)
	}
	return nil
}

type paperID struct {
	ID string `json:"id"`
}

func paperIDs(raw json.RawMessage, inObject bool) ([]string, error) {
	var ps []paperID
	if inObject {
		var o struct {
			Papers []paperID `json:"papers"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		ps = o.Papers
	} else if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, err
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out, nil
}
