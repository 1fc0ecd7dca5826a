package def

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a definition file, where it was written and in
// which stage.
type Error struct {
	File  string
	Line  int
	Col   int
	Stage string // "" outside a stage
	Msg   string
}

// Error formats as file:line:col: [stage "id": ]message, the form editors
// and `quarry workflow validate` print.
func (e Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Col)
	if e.Stage != "" {
		fmt.Fprintf(&b, "stage %q: ", e.Stage)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one file, in file order.
type Errors []Error

// Error joins the problems one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sorted orders the problems by place and drops exact repeats.
func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Col < es[j].Col
	})
	out := es[:0]
	for i, e := range es {
		if i > 0 && e == es[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// reporter collects problems for one file.
type reporter struct {
	file string
	errs Errors
}

func (r *reporter) at(p Pos, stage, format string, args ...any) {
	r.errs = append(r.errs, Error{File: r.file, Line: p.Line, Col: p.Col, Stage: stage, Msg: fmt.Sprintf(format, args...)})
}
