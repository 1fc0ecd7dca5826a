package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// TestConflictDecidedSaysWhenInWords: the 409 for a checkpoint decided
// already names the time as the run page does ("2026-11-25 14:05:03 UTC"),
// in UTC whatever the zone it was recorded in, not as a raw ISO timestamp.
func TestConflictDecidedSaysWhenInWords(t *testing.T) {
	at := time.Date(2026, 11, 25, 15, 5, 3, 0, time.FixedZone("CET", 3600))
	err := engine.ConflictDecided(engine.DecisionRecord{Decision: engine.Decision{Action: engine.Approve, DecidedBy: "ana"}, CheckpointID: "cp1", DecidedAt: at})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	msg := fault.ErrorMessage(err)
	require.Contains(t, msg, "already decided by ana at 2026-11-25 14:05:03 UTC")
	require.NotContains(t, msg, "T14:05:03Z")
}
