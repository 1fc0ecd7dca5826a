package views

// How a form ties an invalid field to its error, for screen readers and
// keyboards: the error text has an id, the input says it is invalid and is
// described by that text, and the first invalid input of the form has
// focus when the form comes back (autofocus: no script needed).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a-h/templ"
)

// fieldErrID is the id of the error text FieldErr shows for key
// ("queries[1].text" → "err-queries-1-text").
func fieldErrID(key string) string {
	var b strings.Builder
	b.WriteString("err")
	dash := true
	for _, r := range key {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			if dash {
				b.WriteByte('-')
				dash = false
			}
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

// fieldAttrs are the attributes of the input for field key: aria-invalid
// and aria-describedby naming the error's text when errs has one for key
// (after describedBy, the ids the input is described by anyway, such as
// a hint's), and autofocus when key is focus, the form's first error.
func fieldAttrs(errs map[string]string, key, focus string, describedBy ...string) templ.Attributes {
	a := templ.Attributes{}
	ids := slices.Clone(describedBy)
	if _, bad := errs[key]; bad {
		a["aria-invalid"] = "true"
		ids = append(ids, fieldErrID(key))
	}
	if len(ids) > 0 {
		a["aria-describedby"] = strings.Join(ids, " ")
	}
	if focus != "" && key == focus {
		a["autofocus"] = true
	}
	return a
}

// firstError is the first of keys, in the form's order, that errs has an
// error for ("" when none has).
func firstError(errs map[string]string, keys ...string) string {
	for _, k := range keys {
		if _, bad := errs[k]; bad {
			return k
		}
	}
	return ""
}

// strategyFocus is the strategy form's first invalid field, in the order
// the form shows them: an error on the queries as a whole or on the
// sources is focused on the first query or source.
func strategyFocus(f StrategyForm) string {
	keys := []string{"queries"}
	for i := range f.Queries {
		keys = append(keys, queryKey(i))
	}
	keys = append(keys, "sources", "year_range.from", "year_range.to", "max_results_per_source",
		"filters.include_terms", "filters.exclude_terms", "filters.fields_of_study", "files")
	switch k := firstError(f.Errors, keys...); k {
	case "queries":
		return queryKey(0)
	default:
		return k
	}
}

// queryKey is the field path of query i's text.
func queryKey(i int) string { return fmt.Sprintf("queries[%d].text", i) }

// queryAttrs are query i's input attributes: its own error, and for the
// first query also an error on the queries as a whole.
func queryAttrs(f StrategyForm, i int) templ.Attributes {
	focus := strategyFocus(f)
	if i == 0 && firstError(f.Errors, "queries") != "" {
		a := fieldAttrs(f.Errors, queryKey(0), focus, fieldErrID("queries"))
		a["aria-invalid"] = "true"
		return a
	}
	return fieldAttrs(f.Errors, queryKey(i), focus)
}

// sourceAttrs are a source checkbox's attributes: the sources' error
// (formErrors gathers every source's under "sources") describes each,
// and the first gets the focus when it is the form's first error.
func sourceAttrs(f StrategyForm, i int) templ.Attributes {
	focus := ""
	if i == 0 {
		focus = strategyFocus(f)
	}
	return fieldAttrs(f.Errors, "sources", focus)
}

// startFocus is the start form's first invalid field.
func startFocus(f StartForm) string {
	return firstError(f.Errors, "question", "sources", "max_iterations")
}

// startSourceAttrs are a source checkbox's attributes on the start form,
// as sourceAttrs on the strategy form.
func startSourceAttrs(f StartForm, i int) templ.Attributes {
	focus := ""
	if i == 0 {
		focus = startFocus(f)
	}
	return fieldAttrs(f.Errors, "sources", focus)
}

// reviewMarkKey and reviewNoteKey are the error keys of a paper's mark
// (the form's "mark:<id>" input) and note (the engine's field path).
func reviewMarkKey(id string) string { return "mark:" + id }
func reviewNoteKey(id string) string { return "paper_notes[" + id + "]" }

// reviewFocus is the review form's first invalid field in the page's
// order: each paper's mark, then its note, then the feedback.
func reviewFocus(f ReviewForm) string {
	if len(f.Errors) == 0 {
		return ""
	}
	var keys []string
	for _, g := range f.Groups {
		for _, p := range g.Papers {
			keys = append(keys, reviewMarkKey(p.ID), reviewNoteKey(p.ID))
		}
	}
	return firstError(f.Errors, append(keys, "free_text_feedback")...)
}

// reviewMarkAttrs are a mark radio's attributes: every radio of the paper
// is described by the mark's error, and the first has the focus when the
// mark is the form's first error.
func reviewMarkAttrs(f ReviewForm, id string, first bool) templ.Attributes {
	focus := ""
	if first {
		focus = reviewFocus(f)
	}
	return fieldAttrs(f.Errors, reviewMarkKey(id), focus)
}
