package searcher_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
)

// TestSearcherAppliesExclusionsASourceCannotBeSent: Crossref and Semantic
// Scholar's relevance search have no exclusion syntax, so the exclusion is
// applied to what they return, and the result says so; a source that can
// exclude is sent the exclusion and its results are kept as they come.
func TestSearcherAppliesExclusionsASourceCannotBeSent(t *testing.T) {
	t.Parallel()
	papers := func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		return []research.RawPaper{
			{Title: "Sleep and memory consolidation", DOI: "10.1/a"},
			{Title: "Sleep states of computer memory chips", DOI: "10.1/b"},
			{Title: "Memory in sleep", Abstract: "Not about Computer-Memory at all.", DOI: "10.1/c"},
		}, nil
	}
	ast, err := query.Parse(`sleep memory -"computer memory"`)
	require.NoError(t, err)
	names := []string{research.SourceCrossref, research.SourceOpenAlex}
	st := strategy(names, research.Query{Text: ast.String(), PerSource: query.RenderAll(ast, names)})
	s := newSearcher(t, searcher.Options{}, fakeSource{name: research.SourceCrossref, fn: papers}, fakeSource{name: research.SourceOpenAlex, fn: papers})
	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)

	cr := res.Sources[research.SourceCrossref]
	require.Equal(t, []string{"sleep memory"}, cr.Queries, "what Crossref was sent")
	require.Equal(t, 1, cr.Count)
	require.Empty(t, cr.Error)
	require.Contains(t, cr.QueryResults[0].Warning, `2 of 3 results using "computer memory" were left out after retrieval`)
	oa := res.Sources[research.SourceOpenAlex]
	require.Equal(t, []string{`sleep AND memory NOT "computer memory"`}, oa.Queries)
	require.Equal(t, 3, oa.Count, "a source sent the exclusion applied it itself")
	require.Empty(t, oa.Warnings)
}

// TestSearcherSaysWhatSemanticScholarWasNotSent: Semantic Scholar is sent
// each concept's main term (a long bag of words finds little there), and
// the result names the alternatives it was not sent, next to the
// exclusion applied after retrieval.
func TestSearcherSaysWhatSemanticScholarWasNotSent(t *testing.T) {
	t.Parallel()
	var sent []string
	papers := func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		sent = append(sent, req.Query)
		return []research.RawPaper{{Title: "Sepsis in intensive care", DOI: "10.1/a"}}, nil
	}
	ast, err := query.Parse(`(sepsis OR "septic shock") AND (icu OR "intensive care") -mice`)
	require.NoError(t, err)
	names := []string{research.SourceSemanticScholar}
	st := strategy(names, research.Query{Text: ast.String(), PerSource: query.RenderAll(ast, names)})
	s := newSearcher(t, searcher.Options{}, fakeSource{name: research.SourceSemanticScholar, fn: papers})
	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)
	require.Equal(t, []string{"sepsis icu"}, sent)
	w := res.Sources[research.SourceSemanticScholar].QueryResults[0].Warning
	require.Contains(t, w, `not sent: "septic shock", "intensive care"`)
	require.Contains(t, w, `"mice"`, "the exclusion applied after retrieval is said too")
}

// TestSearcherSaysATruncationWasDropped: child* is searched as "child" by
// a source without truncation, and the result says so; PubMed truncates
// and says nothing.
func TestSearcherSaysATruncationWasDropped(t *testing.T) {
	t.Parallel()
	papers := func(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
		return []research.RawPaper{{Title: "Asthma in children", DOI: "10.1/a"}}, nil
	}
	ast, err := query.Parse(`child* asthma`)
	require.NoError(t, err)
	names := []string{research.SourceOpenAlex, research.SourcePubMed}
	st := strategy(names, research.Query{Text: ast.String(), PerSource: query.RenderAll(ast, names)})
	s := newSearcher(t, searcher.Options{}, fakeSource{name: research.SourceOpenAlex, fn: papers}, fakeSource{name: research.SourcePubMed, fn: papers})
	res, err := s.Search(context.Background(), st)
	require.NoError(t, err)
	require.Contains(t, res.Sources[research.SourceOpenAlex].QueryResults[0].Warning, `"child*" searched as the word without its wildcard`)
	require.Empty(t, res.Sources[research.SourcePubMed].QueryResults[0].Warning)
}
