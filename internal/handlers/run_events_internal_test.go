package handlers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
)

// TestMarkOfARelayedEvent: a mark saved on another replica arrives as the
// JSON of its MarkEvent and is read back as the one saved here is.
func TestMarkOfARelayedEvent(t *testing.T) {
	t.Parallel()
	saved := MarkEvent{Mark: research.Mark{PaperID: "doi:10.1/x", Mark: research.MarkRelevant, By: "Ann"}, CheckpointID: "cp1"}
	m, ok := markOf(engine.Event{Type: EventMark, Data: saved})
	require.True(t, ok)
	require.Equal(t, saved, m)
	raw, err := json.Marshal(saved)
	require.NoError(t, err)
	var relayed any
	require.NoError(t, json.Unmarshal(raw, &relayed))
	m, ok = markOf(engine.Event{Type: EventMark, Data: relayed})
	require.True(t, ok)
	require.Equal(t, saved.PaperID, m.PaperID)
	require.Equal(t, saved.CheckpointID, m.CheckpointID)
	_, ok = markOf(engine.Event{Type: engine.EventProgress, Data: saved})
	require.False(t, ok, "only mark events")
	_, ok = markOf(engine.Event{Type: EventMark, Data: map[string]any{"x": 1}})
	require.False(t, ok, "data that is no mark")
}
