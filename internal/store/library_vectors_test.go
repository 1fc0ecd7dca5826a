package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/library"
	"quarry/internal/store"
)

func docsOf(ps []store.PaperText) []int64 {
	var out []int64
	for _, p := range ps {
		out = append(out, p.Doc)
	}
	return out
}

// TestPaperVectorsResumeAndInvalidation: the papers lacking a vector are
// listed from where a pass stopped, storing vectors takes papers off the
// list, a re-import that changes a paper's title or abstract drops its
// vector (and one that changes nothing keeps it), and every change moves
// the generation a cache watches.
func TestPaperVectorsResumeAndInvalidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	a := paper("Cars on roads", "Automobiles in traffic.", 2020, "10.9/a")
	b := paper("Heart failure", "Cardiac outcomes.", 2019, "10.9/b")
	c := paper("Protein folding", "Structures.", 0, "10.9/c")
	_, err := library.Import(ctx, st, stream(a, b, c), library.ImportOptions{})
	require.NoError(t, err)

	todo, err := st.PapersWithoutVector(ctx, "m1", 0, 2)
	require.NoError(t, err)
	require.Len(t, todo, 2)
	require.Equal(t, "Cars on roads", todo[0].Title)
	require.Equal(t, "Automobiles in traffic.", todo[0].Abstract)
	gen0, err := st.VectorGeneration(ctx)
	require.NoError(t, err)
	n, err := st.PutPaperVectors(ctx, "m1", todo, [][]float32{{1, 0, 0}, {0, 1, 0}})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	gen1, err := st.VectorGeneration(ctx)
	require.NoError(t, err)
	require.Greater(t, gen1, gen0)

	// A restart asks from 0 again and finds exactly what is missing.
	rest, err := st.PapersWithoutVector(ctx, "m1", 0, 10)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.Equal(t, "Protein folding", rest[0].Title)
	// From where the pass stopped, the same.
	after, err := st.PapersWithoutVector(ctx, "m1", todo[1].Doc, 10)
	require.NoError(t, err)
	require.Equal(t, docsOf(rest), docsOf(after))
	// Another model has no vectors.
	other, err := st.PapersWithoutVector(ctx, "m2", 0, 10)
	require.NoError(t, err)
	require.Len(t, other, 3)

	counts, err := st.CountVectors(ctx, "m1")
	require.NoError(t, err)
	require.Equal(t, store.VectorCounts{Papers: 3, Embedded: 2}, counts)

	set, err := st.LibraryVectors(ctx, "m1", 0)
	require.NoError(t, err)
	require.Equal(t, 3, set.Dim)
	require.Equal(t, docsOf(todo), set.Docs)
	require.Equal(t, []int{2020, 2019}, set.Years)
	require.Equal(t, []float32{1, 0, 0, 0, 1, 0}, set.Data, "little-endian float32s read back exactly")
	require.Equal(t, gen1, set.Generation)

	// Importing the same records changes nothing.
	_, err = library.Import(ctx, st, stream(a, b), library.ImportOptions{})
	require.NoError(t, err)
	counts, err = st.CountVectors(ctx, "m1")
	require.NoError(t, err)
	require.Equal(t, 2, counts.Embedded, "an unchanged re-import keeps the vectors")

	// A corrected abstract drops that paper's vector only.
	b2 := b
	b2.Paper.Abstract = "Cardiac outcomes after surgery."
	_, err = library.Import(ctx, st, stream(b2), library.ImportOptions{})
	require.NoError(t, err)
	vs, err := st.PaperVectors(ctx, "m1", docsOf(todo))
	require.NoError(t, err)
	require.Len(t, vs, 1)
	require.Equal(t, todo[0].Doc, vs[0].Doc)
	gen2, err := st.VectorGeneration(ctx)
	require.NoError(t, err)
	require.Greater(t, gen2, gen1)
	rest, err = st.PapersWithoutVector(ctx, "m1", 0, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"Heart failure", "Protein folding"}, []string{rest[0].Title, rest[1].Title})
}

// TestPutPaperVectorsDropsStaleText: a vector computed from a text the
// paper no longer has (re-imported while the model answered) is not
// stored, so the paper stays on the list.
func TestPutPaperVectorsDropsStaleText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	a := paper("Cars on roads", "Automobiles in traffic.", 2020, "10.9/a")
	_, err := library.Import(ctx, st, stream(a), library.ImportOptions{})
	require.NoError(t, err)
	todo, err := st.PapersWithoutVector(ctx, "m", 0, 10)
	require.NoError(t, err)
	a.Paper.Abstract = "Automobiles in heavy traffic."
	_, err = library.Import(ctx, st, stream(a), library.ImportOptions{})
	require.NoError(t, err)
	n, err := st.PutPaperVectors(ctx, "m", todo, [][]float32{{1, 2}})
	require.NoError(t, err)
	require.Zero(t, n)
	still, err := st.PapersWithoutVector(ctx, "m", 0, 10)
	require.NoError(t, err)
	require.Len(t, still, 1)
}
