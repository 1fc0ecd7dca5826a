package handlers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFormErrorsShowsTermErrorsByTheirList: the strategy form has one
// input per filter list, so an error on one term of it ("filters.
// include_terms[2]", a term over research.MaxTermLength) is shown there,
// naming the term's place, with the list's own error; before, it had no
// input to be shown by and the form came back without saying why.
func TestFormErrorsShowsTermErrorsByTheirList(t *testing.T) {
	t.Parallel()
	got := formErrors(map[string]string{
		"filters.include_terms":            "26 terms; a strategy has at most 25",
		"filters.include_terms[2]":         "101 characters; a term has at most 100",
		"filters.learned_exclude_terms[0]": "120 characters; a term has at most 100",
		"filters.fields_of_study[1]":       "101 characters; a term has at most 100",
		"queries[0].text":                  "query is empty",
	}, nil)
	require.Equal(t, map[string]string{
		"filters.include_terms":   "26 terms; a strategy has at most 25; term 3: 101 characters; a term has at most 100",
		"filters.exclude_terms":   "term 1: 120 characters; a term has at most 100",
		"filters.fields_of_study": "term 2: 101 characters; a term has at most 100",
		"queries[0].text":         "query is empty",
	}, got)
}
