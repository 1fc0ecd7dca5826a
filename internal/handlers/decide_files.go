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
var fileIDShape = regexp.MustCompile(`^[0-9a-f]{24}$`)

// checkFileIDs refuses files whose ID does not have the store's shape,
// naming each as files[i].id.
func checkFileIDs(files []research.AttachedFile) error {
	fe := fault.FieldErrors{}
	for i, f := range files {
		if !fileIDShape.MatchString(f.ID) {
			fe.Add(fmt.Sprintf("files[%d].id", i), fmt.Sprintf("%q is not the ID of a file attached to this run (attach the file at the strategy checkpoint; its ID is given there)", f.ID))
		}
	}
	return fe.Err("invalid search strategy")
}

// checkDecisionFiles applies checkFileIDs to an API decision's revised
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
			return checkFileIDs(revised.Files)
		}
	}
	return nil
}
