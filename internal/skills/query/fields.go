package query

import (
	"slices"
	"strings"
)

// FieldsOfStudy returns the fields a strategy may restrict the search to:
// Semantic Scholar's fixed list, the only filter by field name any source
// documents (https://api.semanticscholar.org/api-docs/graph, paper
// relevance search: "Restricts results to papers in the given fields of
// study, formatted as a comma-separated list"). OpenAlex filters fields
// only by ID in a taxonomy of its own that does not map name for name.
// It is a function returning a fresh slice so no caller can change the
// list for everyone.
func FieldsOfStudy() []string {
	return []string{
		"Computer Science", "Medicine", "Chemistry", "Biology", "Materials Science", "Physics", "Geology",
		"Psychology", "Art", "History", "Geography", "Sociology", "Business", "Political Science", "Economics",
		"Philosophy", "Mathematics", "Engineering", "Environmental Science", "Agricultural and Food Sciences",
		"Education", "Law", "Linguistics",
	}
}

// SortFieldsOfStudy splits fs into the names on FieldsOfStudy, spelled as
// listed, in fs's order and each once, and those that are not, as given.
// Callers differ only in what they do with the unknown ones: a request
// leaves them out, a strategy edit is refused.
func SortFieldsOfStudy(fs []string) (known, unknown []string) {
	for _, f := range fs {
		name, ok := FieldOfStudy(f)
		switch {
		case !ok:
			unknown = append(unknown, f)
		case !slices.Contains(known, name):
			known = append(known, name)
		}
	}
	return known, unknown
}

// FieldOfStudy returns name spelled as FieldsOfStudy lists it, matching
// without regard to case or extra spaces, and whether it is on the list.
func FieldOfStudy(name string) (string, bool) {
	name = strings.Join(strings.Fields(name), " ")
	names := FieldsOfStudy()
	i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, name) })
	if i < 0 {
		return "", false
	}
	return names[i], true
}
