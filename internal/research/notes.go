package research

import "context"

// Note says something a run should remember about how a skill did its work,
// most often that an LLM-backed skill fell back to its offline variant. A
// fallback keeps the run going, so without a note the researcher would never
// learn that the answer came from heuristics instead of the model.
type Note struct {
	Skill   string `json:"skill"`
	Message string `json:"message"`
}

// notesKey is the unexported context key under which the recorder travels,
// so no other package can read or overwrite it by accident.
type notesKey struct{}

// WithNotes returns a context that carries record, so that skills deep in a
// step can report notes without every skill signature growing a logger. The
// workflow attaches one recorder per step and keeps what it receives in the
// run's state. A nil record returns ctx unchanged.
func WithNotes(ctx context.Context, record func(Note)) context.Context {
	if record == nil {
		return ctx
	}
	return context.WithValue(ctx, notesKey{}, record)
}

// AddNote hands n to the recorder carried by ctx. It is a no-op when ctx has
// no recorder, so skills can always call it, in tests and tools alike.
func AddNote(ctx context.Context, n Note) {
	if record, ok := ctx.Value(notesKey{}).(func(Note)); ok {
		record(n)
	}
}
