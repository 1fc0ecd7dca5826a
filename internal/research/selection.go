package research

import "context"

// Library scopes (SearchStrategy.Library): a run searches the whole local
// library, or only its project's selection.
const (
	LibraryAll     = "all"
	LibraryProject = "project"
)

type selectionKey struct{}

// WithLibrarySelection returns a context whose local-library searches see
// only the papers project selected (its library selection). It travels in
// the context, as notes do, because the selection narrows every library
// read a search makes (ranking, counting, the semantic neighbours, the
// papers fetched) without each of those signatures growing a parameter
// that every other caller would pass empty. An empty project returns ctx
// unchanged: the whole library.
func WithLibrarySelection(ctx context.Context, project string) context.Context {
	if project == "" {
		return ctx
	}
	return context.WithValue(ctx, selectionKey{}, project)
}

// LibrarySelection is the project whose selection ctx narrows library
// searches to, or "" for the whole library.
func LibrarySelection(ctx context.Context) string {
	p, _ := ctx.Value(selectionKey{}).(string)
	return p
}
