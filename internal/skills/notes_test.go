package skills_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills"
)

func TestNotes(t *testing.T) {
	t.Parallel()
	t.Run("RecorderReceivesNotes", func(t *testing.T) {
		t.Parallel()
		var got []skills.Note
		ctx := skills.WithNotes(context.Background(), func(n skills.Note) { got = append(got, n) })
		skills.AddNote(ctx, skills.Note{Skill: "scorer", Message: "fell back"})
		skills.AddNote(ctx, skills.Note{Skill: "intent", Message: "second"})
		require.Equal(t, []skills.Note{{Skill: "scorer", Message: "fell back"}, {Skill: "intent", Message: "second"}}, got)
	})
	t.Run("NoRecorderIsNoOp", func(t *testing.T) {
		t.Parallel()
		require.NotPanics(t, func() { skills.AddNote(context.Background(), skills.Note{Skill: "x"}) })
		require.NotPanics(t, func() {
			skills.AddNote(skills.WithNotes(context.Background(), nil), skills.Note{Skill: "x"})
		})
	})
	t.Run("InnerRecorderShadowsOuter", func(t *testing.T) {
		t.Parallel()
		var outer, inner int
		ctx := skills.WithNotes(context.Background(), func(skills.Note) { outer++ })
		ctx2 := skills.WithNotes(ctx, func(skills.Note) { inner++ })
		skills.AddNote(ctx2, skills.Note{})
		skills.AddNote(ctx, skills.Note{})
		require.Equal(t, 1, outer)
		require.Equal(t, 1, inner)
	})
}
