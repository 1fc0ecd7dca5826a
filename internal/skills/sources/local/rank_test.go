package local_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/local"
	"quarry/internal/store"
)

// rankFixture is a library of the papers given plus filler papers on other
// topics, so that ranking has a background to rank against.
func rankFixture(t *testing.T, papers ...research.RawPaper) *local.Source {
	t.Helper()
	src, err := local.New(rankLibrary(t, papers...))
	require.NoError(t, err)
	return src
}

// rankLibrary is rankFixture's store.
func rankLibrary(t *testing.T, papers ...research.RawPaper) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "lib.db"), store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	topics := []string{"soil erosion in river basins", "monetary policy and inflation", "bird migration routes", "protein folding kinetics"}
	for i := range 40 {
		papers = append(papers, research.RawPaper{
			Title:    fmt.Sprintf("A study of %s, part %d", topics[i%len(topics)], i),
			Abstract: fmt.Sprintf("We measure %s across sites and years.", topics[i%len(topics)]),
			Year:     2000 + i%20,
		})
	}
	i := 0
	_, err = library.Import(ctx, st, func() (library.Record, error) {
		if i == len(papers) {
			return library.Record{}, io.EOF
		}
		p := papers[i]
		p.ID = research.StableID(p)
		i++
		return library.Record{Line: i, Paper: p, Origin: "fixture"}, nil
	}, library.ImportOptions{})
	require.NoError(t, err)
	return st
}

func titles(t *testing.T, src *local.Source, req sources.SourceRequest) []string {
	t.Helper()
	got, err := src.Search(context.Background(), req)
	require.NoError(t, err)
	var out []string
	for _, p := range got {
		out = append(out, p.Title)
	}
	return out
}

// TestRankedFindsWithoutTheExactPhrase is the example: papers that
// say "convolutional networks" and "image recognition" but never "deep
// learning" are found for a query that asks for the phrase, ranked by how
// much of the query they match; a strict match found none of them.
func TestRankedFindsWithoutTheExactPhrase(t *testing.T) {
	t.Parallel()
	src := rankFixture(t,
		research.RawPaper{Title: "Deep Residual Learning for Image Recognition", Abstract: "Deeper neural networks are more difficult to train.", Year: 2016},
		research.RawPaper{Title: "Very Deep Convolutional Networks for Large-Scale Image Recognition", Abstract: "We investigate the effect of the convolutional network depth on its accuracy.", Year: 2015},
		research.RawPaper{Title: "Recognition of bird song", Abstract: "Song recognition in the field.", Year: 2012},
	)
	got := titles(t, src, sources.SourceRequest{Query: render(t, `("deep learning" OR "neural network") "image recognition"`), MaxResults: 10})
	require.GreaterOrEqual(t, len(got), 3)
	require.ElementsMatch(t, []string{"Deep Residual Learning for Image Recognition", "Very Deep Convolutional Networks for Large-Scale Image Recognition"}, got[:2],
		"the papers matching both concepts loosely come first")
	require.Equal(t, "Recognition of bird song", got[2], "a paper matching one word of one concept comes after")
}

// TestRankedCoordination: a paper that matches every concept outranks one
// that repeats a single concept many times.
func TestRankedCoordination(t *testing.T) {
	t.Parallel()
	src := rankFixture(t,
		research.RawPaper{Title: "Sleep, sleep and more sleep", Abstract: "Sleep duration, sleep quality and sleep hygiene in sleep clinics.", Year: 2019},
		research.RawPaper{Title: "Sleep and memory consolidation", Abstract: "Overnight memory gains.", Year: 2018},
	)
	got := titles(t, src, sources.SourceRequest{Query: render(t, `sleep memory`), MaxResults: 10})
	require.Equal(t, []string{"Sleep and memory consolidation", "Sleep, sleep and more sleep"}, got)
}

// TestRankedPhraseAndProximity: the exact phrase ranks above its words
// close together, which rank above its words far apart.
func TestRankedPhraseAndProximity(t *testing.T) {
	t.Parallel()
	exact := research.RawPaper{Title: "Trials of heart failure therapy", Abstract: "Outcomes in heart failure after treatment with new drugs in a cohort.", Year: 2010}
	near := research.RawPaper{Title: "Trials of therapy when the heart is failing", Abstract: "Outcomes in heart muscle failure after treatment with new drugs in a cohort.", Year: 2010}
	apart := research.RawPaper{Title: "Trials of heart surgery therapy", Abstract: "Outcomes after treatment with new drugs in a cohort; renal failure was rare.", Year: 2010}
	src := rankFixture(t, apart, near, exact)
	got := titles(t, src, sources.SourceRequest{Query: render(t, `"heart failure"`), MaxResults: 10})
	require.Equal(t, []string{exact.Title, near.Title, apart.Title}, got)
}

// TestRankedExclusionsAndYears: an excluded term removes a paper however
// well it ranks, and years still bound the search.
func TestRankedExclusionsAndYears(t *testing.T) {
	t.Parallel()
	src := rankFixture(t,
		research.RawPaper{Title: "Statins in older adults", Abstract: "Cardiovascular prevention with statins.", Year: 2015},
		research.RawPaper{Title: "Statins in mice", Abstract: "Statins and cholesterol in an animal model.", Year: 2016},
		research.RawPaper{Title: "Statins and cardiovascular events", Abstract: "A trial.", Year: 2001},
	)
	got := titles(t, src, sources.SourceRequest{Query: render(t, `statins -mice`), MaxResults: 10})
	require.ElementsMatch(t, []string{"Statins in older adults", "Statins and cardiovascular events"}, got)
	got = titles(t, src, sources.SourceRequest{Query: render(t, `statins`), MaxResults: 10, YearRange: research.YearRange{From: 2010}})
	require.ElementsMatch(t, []string{"Statins in older adults", "Statins in mice"}, got)
}

// TestRankedQuestionWords: the question's words rank a paper that matches
// the query's concept and the question's other words first.
func TestRankedQuestionWords(t *testing.T) {
	t.Parallel()
	src := rankFixture(t,
		research.RawPaper{Title: "Psychotherapy outcomes", Abstract: "Outcomes of psychotherapy in depression.", Year: 2015},
		research.RawPaper{Title: "Psychotherapy for borderline personality disorder", Abstract: "Dialectical behavior therapy compared with usual care.", Year: 2016},
	)
	req := sources.SourceRequest{Query: render(t, `psychotherapy`), MaxResults: 10}
	req.QuestionWords = []string{"dialectical", "behavior", "therapy", "borderline"}
	got := titles(t, src, req)
	require.Equal(t, "Psychotherapy for borderline personality disorder", got[0])
}

// TestRankedPagesAndTotal: pages of a ranked search neither repeat nor
// skip a paper, and the total is every paper that matched a term.
func TestRankedPagesAndTotal(t *testing.T) {
	t.Parallel()
	var papers []research.RawPaper
	for i := range 30 {
		papers = append(papers, research.RawPaper{Title: fmt.Sprintf("Malaria vaccine trial %d", i), Abstract: "Efficacy of a malaria vaccine in children.", Year: 2000 + i%20})
	}
	src := rankFixture(t, papers...)
	ctx := context.Background()
	q := render(t, `malaria vaccine`)
	seen := map[string]bool{}
	for off := 0; off < 30; off += 7 {
		page, err := src.SearchCounted(ctx, sources.SourceRequest{Query: q, MaxResults: 7, Offset: off})
		require.NoError(t, err)
		require.Equal(t, 30, page.Total)
		for _, p := range page.Papers {
			require.False(t, seen[p.ID], "%s on two pages", p.Title)
			seen[p.ID] = true
		}
	}
	require.Len(t, seen, 30)
}
