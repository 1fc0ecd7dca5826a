package research_test

import (
	"context"
	"quarry/internal/research"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNotes(t *testing.T) {
	t.Parallel()
	t.Run("RecorderReceivesNotes", func(t *testing.T) {
		t.Parallel()
		var got []research.Note
		ctx := research.WithNotes(context.Background(), func(n research.Note) { got = append(got, n) })
		research.AddNote(ctx, research.Note{Skill: "scorer", Message: "fell back"})
		research.AddNote(ctx, research.Note{Skill: "intent", Message: "second"})
		require.Equal(t, []research.Note{{Skill: "scorer", Message: "fell back"}, {Skill: "intent", Message: "second"}}, got)
	})
	t.Run("NoRecorderIsNoOp", func(t *testing.T) {
		t.Parallel()
		require.NotPanics(t, func() { research.AddNote(context.Background(), research.Note{Skill: "x"}) })
		require.NotPanics(t, func() {
			research.AddNote(research.WithNotes(context.Background(), nil), research.Note{Skill: "x"})
		})
	})
	t.Run("InnerRecorderShadowsOuter", func(t *testing.T) {
		t.Parallel()
		var outer, inner int
		ctx := research.WithNotes(context.Background(), func(research.Note) { outer++ })
		ctx2 := research.WithNotes(ctx, func(research.Note) { inner++ })
		research.AddNote(ctx2, research.Note{})
		research.AddNote(ctx, research.Note{})
		require.Equal(t, 1, outer)
		require.Equal(t, 1, inner)
	})
}
