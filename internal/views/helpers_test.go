package views

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/skills"
)

func TestConceptsText(t *testing.T) {
	t.Parallel()
	got := conceptsText([]skills.Concept{{Term: "memory consolidation"}, {Term: "sleep", Synonyms: []string{"nap", "rest"}}})
	require.Equal(t, "memory consolidation; sleep (nap, rest)", got)
	require.Empty(t, conceptsText(nil))
}
