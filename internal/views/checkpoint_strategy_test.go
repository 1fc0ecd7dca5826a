package views

import (
	"quarry/internal/research"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConceptsText(t *testing.T) {
	t.Parallel()
	got := conceptsText([]research.Concept{{Term: "memory consolidation"}, {Term: "sleep", Synonyms: []string{"nap", "rest"}}})
	require.Equal(t, "memory consolidation; sleep (nap, rest)", got)
	require.Empty(t, conceptsText(nil))
}
