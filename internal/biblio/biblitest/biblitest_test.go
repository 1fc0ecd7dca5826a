package biblitest

import (
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/jsonl"
	"quarry/internal/research"
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
			rec := biblio.Record{Paper: research.RawPaper{Authors: []string{tt.author}}}
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

// recorder is a testing.TB that notes a failure instead of reporting it,
// so a test can check that the harness fails when it should; only what
// require and testify call is implemented.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true; runtime.Goexit() }
func (r *recorder) Name() string          { return "recorder" }

// fails runs fn against a recorder and reports whether it failed.
func fails(fn func(t testing.TB)) bool {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r.failed
}

// dropNotes is a writer that loses every note, a lossy format.
type dropNotes struct{ biblio.Writer }

func (d dropNotes) Write(rec biblio.Record) error {
	rec.Note = ""
	return d.Writer.Write(rec)
}

func TestRoundTripCatchesALossyWriter(t *testing.T) {
	t.Parallel()
	good := New(jsonl.NewReader, jsonl.NewWriter)
	lossy := good
	lossy.NewWriter = func(w io.Writer) biblio.Writer { return dropNotes{jsonl.NewWriter(w)} }
	require.False(t, fails(func(t testing.TB) { good.RoundTrip(t, Corpus(t)) }))
	require.True(t, fails(func(t testing.TB) { lossy.RoundTrip(t, Corpus(t)) }))
	ignoresNotes := lossy
	ignoresNotes.Carried = func(r biblio.Record) biblio.Record {
		c := biblio.Comparable(r)
		c.Note = ""
		return c
	}
	require.False(t, fails(func(t testing.TB) { ignoresNotes.RoundTrip(t, Corpus(t)) }), "Carried declares the loss")
}
