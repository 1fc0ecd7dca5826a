package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

// fileIDShape is the shape of an attached file's ID as store.AttachRunFile
// makes it: 12 random bytes in lower-case hex. A strategy is checked
// against it at the decision, so a file reference no upload could have
// produced ("../../etc/passwd", another system's ID) is refused there with
// the field named, rather than accepted and failing the run's search.
// The attach test's approve shows the store's IDs pass.
var fileIDShape = regexp.MustCompile(`^[0-9a-f]{24}$`)

// checkFiles refuses files whose ID does not have the store's shape, or
// that are not attached to run runID, naming each as files[i].id. A file
// of another run would only fail its search later (the store reads a file
// only for its own run); reading it here costs what the search step
// spends on it anyway, and decisions are rare. files may be nil (shape
// only).
func checkFiles(ctx context.Context, store RunFileStore, runID string, files []research.AttachedFile) error {
	fe := fault.FieldErrors{}
	for i, f := range files {
		field := fmt.Sprintf("files[%d].id", i)
		if !fileIDShape.MatchString(f.ID) {
			fe.Add(field, fmt.Sprintf("%q is not the ID of a file attached to this run (attach the file at the strategy checkpoint; its ID is given there)", f.ID))
			continue
		}
		if store == nil {
			continue
		}
		_, err := store.RunFilePapers(ctx, runID, f.ID)
		switch fault.ErrorCode(err) {
		case "":
		case fault.ENotFound:
			fe.Add(field, fmt.Sprintf("no file %q is attached to this run", f.ID))
		default:
			return err
		}
	}
	return fe.Err("invalid search strategy")
}

// checkDecisionFiles applies checkFiles to an API decision's revised
// strategy. Revised data that does not decode is left to the engine, which
// names what is wrong with it; files sent to a checkpoint of another kind
// are too (it refuses them as unknown fields).
func (a *API) checkDecisionFiles(ctx context.Context, runID string, in DecisionInput) error {
	var revised struct {
		Files []research.AttachedFile `json:"files"`
	}
	if len(in.RevisedData) == 0 || json.Unmarshal(in.RevisedData, &revised) != nil || len(revised.Files) == 0 {
		return nil
	}
	cps, err := a.runs.Checkpoints(ctx, runID)
	if err != nil {
		return err
	}
	for _, cd := range cps {
		if cd.Checkpoint.ID == in.CheckpointID && cd.Checkpoint.Kind == pipeline.KindStrategyConfirmation {
			return checkFiles(ctx, a.files, runID, revised.Files)
		}
	}
	return nil
}
