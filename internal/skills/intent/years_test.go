package intent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/intent"
)

// TestParseIntentBareYear checks that a year ending the question is read as
// that year, as "in 2021" is, and that numbers that are names, counts or
// versions are not.
func TestParseIntentBareYear(t *testing.T) {
	t.Parallel()
	year := func(y int) research.YearRange { return research.YearRange{From: y, To: y} }
	tests := []struct {
		question string
		want     research.YearRange
	}{
		{"covid vaccines 2021", year(2021)},
		{"covid vaccines, 2021", year(2021)},
		{"covid vaccines (2021)", year(2021)},
		{"COVID vaccine uptake 2021?", year(2021)},
		{"sepsis mortality 1998", year(1998)},
		// Not years: counts, versions, names, the future.
		{"top 10 cancer drugs", research.YearRange{}},
		{"COVID-19 vaccines", research.YearRange{}},
		{"vaccines against COVID-19", research.YearRange{}},
		{"5G networks and health", research.YearRange{}},
		{"H1N1 influenza vaccination", research.YearRange{}},
		{"1000 genomes project", research.YearRange{}},
		{"Web 2.0 adoption", research.YearRange{}},
		{"sepsis trials with 2000 participants", research.YearRange{}},
		{"sepsis trials with more than 2000", research.YearRange{}},
		{"sepsis trials with n = 2000", research.YearRange{}},
		{"long-term effects of coronavirus disease 2019", research.YearRange{}},
		{"projects funded under Horizon 2020", research.YearRange{}},
		{"security of Windows 2000", research.YearRange{}},
		{"renewable energy targets of Saudi Vision 2030", research.YearRange{}},
		{"covid vaccines 2021-2022", research.YearRange{From: 2021, To: 2022}},
		{"covid vaccines since 2020", research.YearRange{From: 2020}},
	}
	p := intent.New(june2025)
	for _, tt := range tests {
		got, err := p.ParseIntent(context.Background(), tt.question)
		require.NoError(t, err, tt.question)
		require.Equal(t, tt.want, got.YearRange, tt.question)
		if tt.want != (research.YearRange{}) {
			for _, c := range conceptTerms(got) {
				require.NotRegexp(t, `\d`, c, "a year must not become part of a concept")
			}
		}
	}
}
