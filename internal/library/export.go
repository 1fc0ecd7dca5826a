package library

import (
	"context"

	"quarry/internal/biblio"
	"quarry/internal/store"
)

// Exporter is what an export needs of the database: internal/store
// implements it.
type Exporter interface {
	EachLibraryPaper(ctx context.Context, fn func(store.LibraryPaper) error) error
}

// Export writes every paper of the library to out, as ToBiblio reads it
// back from the store, and closes out. The HTTP export and the round-trip
// test share it, so the test checks what people download.
func Export(ctx context.Context, st Exporter, out biblio.Writer) error {
	if err := st.EachLibraryPaper(ctx, func(p store.LibraryPaper) error {
		return out.Write(ToBiblio(p.RawPaper, p.Extra))
	}); err != nil {
		return err
	}
	return out.Close()
}
