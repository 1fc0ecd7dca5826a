package research_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// TestMarkValidate: every bad field is named at once.
func TestMarkValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		m      research.Mark
		fields []string
	}{
		{"Relevant", research.Mark{PaperID: "p", Mark: "relevant", Note: "n"}, nil},
		{"IrrelevantWithReason", research.Mark{PaperID: "p", Mark: "irrelevant", Reason: "population"}, nil},
		{"Unsure", research.Mark{PaperID: "p", Mark: "unsure"}, nil},
		{"NoMark", research.Mark{PaperID: "p"}, []string{"mark"}},
		{"UnknownMark", research.Mark{PaperID: "p", Mark: "maybe"}, []string{"mark"}},
		{"ReasonNotIrrelevant", research.Mark{PaperID: "p", Mark: "relevant", Reason: "x"}, []string{"reason"}},
		{"AllAtOnce", research.Mark{Mark: "maybe", Note: strings.Repeat("n", research.MaxPaperNote+1), Reason: strings.Repeat("r", research.MaxMarkReason+1)},
			[]string{"paper_id", "mark", "note", "reason"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.m.Normalize().Validate()
			if tt.fields == nil {
				require.NoError(t, err)
				return
			}
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			var got []string
			for f := range fault.ErrorFields(err) {
				got = append(got, f)
			}
			require.ElementsMatch(t, tt.fields, got)
		})
	}
}
