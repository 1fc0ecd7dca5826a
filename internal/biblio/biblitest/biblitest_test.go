package biblitest

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/skills"
)

// endless is a broken reader that never reaches io.EOF.
type endless struct{}

func (endless) Next() (biblio.Record, error) {
	return biblio.Record{Line: 1, Problem: "again"}, nil
}

// failing is a reader whose input breaks after one record.
type failing struct{ n int }

func (f *failing) Next() (biblio.Record, error) {
	f.n++
	if f.n > 1 {
		return biblio.Record{}, io.ErrUnexpectedEOF
	}
	return biblio.Record{Line: 1}, nil
}

func TestReadBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reader    biblio.Reader
		limit     int
		wantRecs  int
		wantLoops bool
		wantErr   error
	}{
		{"EndlessIsCaughtAtTheLimit", endless{}, 5, 5, true, nil},
		{"ErrorEndsTheRead", &failing{}, 5, 1, false, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := Format{NewReader: func(io.Reader) biblio.Reader { return tt.reader }}
			res := f.readBounded(nil, tt.limit)
			require.Len(t, res.recs, tt.wantRecs)
			require.Equal(t, tt.wantLoops, res.loops)
			require.ErrorIs(t, res.err, tt.wantErr)
		})
	}
}

func TestNamesInvertible(t *testing.T) {
	t.Parallel()
	tests := []struct {
		author string
		want   bool
	}{
		{"Ludwig van Beethoven", true},
		{"Martin Luther King Jr.", true},
		{"Plato", true},
		{"Smith III", true},
		// "Smith, Jr, III" reads as Last, Suffix, First: the one ambiguity
		// Format.InvertsNames exists for.
		{"Jr Smith III", false},
	}
	for _, tt := range tests {
		t.Run(tt.author, func(t *testing.T) {
			t.Parallel()
			rec := biblio.Record{Paper: skills.RawPaper{Authors: []string{tt.author}}}
			require.Equal(t, tt.want, namesInvertible(rec))
		})
	}
}

func TestCorpusCoversEveryType(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, rec := range Corpus(t) {
		seen[rec.Type] = true
		require.NoError(t, rec.Paper.Validate())
	}
	for _, typ := range append(Types, "") {
		require.True(t, seen[typ], "the corpus has a record of type %q", typ)
	}
}

func TestSyntheticRecordsAreValid(t *testing.T) {
	t.Parallel()
	for i := range 100 {
		rec := Synthetic(i)
		biblio.Finish(&rec)
		require.Empty(t, rec.Problem, i)
		require.NotEmpty(t, rec.Paper.Authors, i)
	}
	require.NotEqual(t, Synthetic(1).Paper.Title, Synthetic(2).Paper.Title)
}
