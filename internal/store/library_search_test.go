package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/query"
)

func TestSearchLibraryRanksFiltersAndLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	inTitle := paper("Transformers for protein folding", "We study structure.", 2021, "10.2/t")
	inAbstract := paper("A study of structure prediction", "We use transformers for proteins.", 2021, "10.2/a")
	old := paper("Transformers in 1999", "Early transformers.", 1999, "10.2/o")
	noYear := paper("Transformers without a year", "Undated.", 0, "10.2/n")
	_, err := library.Import(ctx, st, stream(inAbstract, inTitle, old, noYear), library.ImportOptions{})
	require.NoError(t, err)

	tests := []struct {
		name  string
		match string
		years research.YearRange
		limit int
		want  []string
	}{
		{"TitleBeatsAbstract", `"protein" AND "transformers"`, research.YearRange{}, 10, []string{inTitle.Paper.ID, inAbstract.Paper.ID}},
		{"PorterStemming", `"folded"`, research.YearRange{}, 10, []string{inTitle.Paper.ID}},
		{"YearRangeKeepsUnknownYear", `"transformers"`, research.YearRange{From: 2020, To: 2022}, 10, []string{inTitle.Paper.ID, inAbstract.Paper.ID, noYear.Paper.ID}},
		{"YearTo", `"transformers"`, research.YearRange{To: 2000}, 10, []string{old.Paper.ID, noYear.Paper.ID}},
		{"Limit", `"protein" AND "transformers"`, research.YearRange{}, 1, []string{inTitle.Paper.ID}},
		{"Not", `"transformers" NOT "protein" NOT "proteins"`, research.YearRange{From: 2000}, 10, []string{noYear.Paper.ID}},
		{"NoMatch", `"nothing-here-at-all"`, research.YearRange{}, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := st.SearchLibrary(ctx, tt.match, tt.years, tt.limit)
			require.NoError(t, err)
			var ids []string
			for _, p := range got {
				ids = append(ids, p.ID)
			}
			if tt.name == "YearRangeKeepsUnknownYear" || tt.name == "YearTo" {
				require.ElementsMatch(t, tt.want, ids)
				return
			}
			require.Equal(t, tt.want, ids)
		})
	}
	got, err := st.SearchLibrary(ctx, `"folding"`, research.YearRange{}, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, inTitle.Paper, got[0], "every stored field comes back")
}

func TestSearchLibraryRejectsBadSyntaxAsInvalid(t *testing.T) {
	t.Parallel()
	st := openLibrary(t)
	_, err := library.Import(context.Background(), st, stream(paper("Anything", "", 2020, "")), library.ImportOptions{})
	require.NoError(t, err)
	for _, match := range []string{`"unclosed`, `a AND`, `(a OR b`, `title:`, `nosuchcol:x`, `NEAR(`, `*`, ``, `   `, `a) OR (b`, `^`} {
		t.Run(match, func(t *testing.T) {
			t.Parallel()
			_, err := st.SearchLibrary(context.Background(), match, research.YearRange{}, 10)
			require.Error(t, err)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "%v", err)
		})
	}
	_, err = st.SearchLibrary(context.Background(), `"anything"`, research.YearRange{}, 0)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}

// FuzzSearchLibrary checks that no string, sent directly or through the
// query language and its local renderer, fails a library search with
// anything but EInvalid, and that whatever the renderer produces is always
// accepted.
func FuzzSearchLibrary(f *testing.F) {
	st := openLibrary(f)
	_, err := library.Import(context.Background(), st, stream(
		paper("Machine learning for sepsis", "Septic shock in children.", 2020, "10.5/1"),
		paper("Case report: NEAR miss", `A "quoted" abstract with title:colons and stars*`, 2019, "10.5/2"),
	), library.ImportOptions{})
	require.NoError(f, err)
	for _, seed := range []string{
		`"machine learning" (sepsis OR "septic shock") -mice NOT (rats OR "case report")`,
		`title:x NEAR/3 y* ^z`, `"unclosed`, `a OR`, `NEAR(a b, 2)`, "a\x00b", "\xff", `{title abstract}: x`,
		`"OR" -"-x"`, `-`, `()`, `a AND NOT b`, `col:"x"`, `x + y`, `"" x`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ctx := context.Background()
		if _, err := st.SearchLibrary(ctx, in, research.YearRange{}, 5); err != nil {
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err), "direct %q: %v", in, err)
		}
		q, err := query.Parse(in)
		if err != nil {
			return
		}
		match := query.RenderAll(q, []string{query.Local})[query.Local]
		if match == "" {
			return
		}
		_, err = st.SearchLibrary(ctx, match, research.YearRange{}, 5)
		require.NoError(t, err, "rendered %q from %q", match, in)
	})
}

// TestSearchLibraryYearPagesMatchTheFullRanking: a year-bounded page is the
// papers of the unbounded ranking that fall inside the years, in order,
// whether the range holds many of the best matches (answered from the
// index's best matches alone) or only the worst (the full query answers).
func TestSearchLibraryYearPagesMatchTheFullRanking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openLibrary(t)
	var recs []library.Record
	for i := range 60 {
		// Fewer repetitions of the word in later papers: later ranks lower.
		abstract := strings.Repeat("malaria ", 1+(60-i)/6) + fmt.Sprintf("cohort %d", i)
		recs = append(recs, paper(fmt.Sprintf("Study %d of fever", i), abstract, 1990+i%30, fmt.Sprintf("10.9/%d", i)))
	}
	_, err := library.Import(ctx, st, stream(recs...), library.ImportOptions{})
	require.NoError(t, err)
	all, err := st.SearchLibrary(ctx, `"malaria"`, research.YearRange{}, 100)
	require.NoError(t, err)
	require.Len(t, all, 60)
	for _, years := range []research.YearRange{{From: 2000}, {To: 1995}, {From: 2019, To: 2019}, {From: 1990, To: 1990}} {
		var want []string
		for _, p := range all {
			if years.Contains(p.Year) {
				want = append(want, p.ID)
			}
		}
		for _, pg := range []struct{ offset, limit int }{{0, 3}, {0, 5}, {2, 3}, {0, 100}} {
			got, err := st.SearchLibraryPage(ctx, `"malaria"`, years, pg.offset, pg.limit)
			require.NoError(t, err)
			var ids []string
			for _, p := range got {
				ids = append(ids, p.ID)
			}
			end := min(pg.offset+pg.limit, len(want))
			require.Equal(t, append([]string(nil), want[min(pg.offset, end):end]...), ids, "years %+v offset %d limit %d", years, pg.offset, pg.limit)
		}
		n, err := st.CountLibrary(ctx, `"malaria"`, years)
		require.NoError(t, err)
		require.Equal(t, len(want), n)
	}
}
