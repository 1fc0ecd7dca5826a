package query_test

import (
	"testing"

	"quarry/internal/fault"
	"quarry/internal/skills/query"
)

// FuzzParse checks that no input makes Parse panic, that every error is
// EInvalid, that whatever parses round-trips through its canonical form, and
// that the local (FTS5) rendering is always a well-formed expression, so
// nothing a researcher types can break the local search.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`"machine learning" (sepsis OR "septic shock") -mice NOT (rats OR "case report")`,
		`a OR b OR c`, `"unclosed`, `(a OR (b))`, `-`, `--x`, `a -b OR c`, `"" x`,
		`title:x NEAR/3 y* ^z`, "a\x00b", "\xff", `AND OR NOT`, `"OR" -"-x"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := query.Parse(in)
		if err != nil {
			if code := fault.ErrorCode(err); code != fault.EInvalid {
				t.Fatalf("Parse(%q) error code %q, want %q", in, code, fault.EInvalid)
			}
			return
		}
		back, err := query.Parse(q.String())
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", q.String(), in, err)
		}
		if back.String() != q.String() {
			t.Fatalf("canonical form drifts: %q -> %q", q.String(), back.String())
		}
		all := query.RenderAll(q, query.Sources())
		if err := checkFTS5(all[query.Local]); err != nil {
			t.Fatalf("local rendering of %q: %v", in, err)
		}
		for src, s := range all {
			if !checkBalanced(s) {
				t.Fatalf("%s rendering of %q is unbalanced: %s", src, in, s)
			}
		}
	})
}
