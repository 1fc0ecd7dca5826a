package dedup_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/dedup"
)

// located is a journal article with an issue, as Embase, Medline, Web of
// Science and Scopus exports give it.
func located(title string, year int, venue, vol, issue, pages string, authors ...string) research.RawPaper {
	p := art(title, year, venue, vol, pages, authors...)
	p.Issue = issue
	return p
}

// TestExplainExportVariants covers how the same article, or two items
// that only look alike, come out of different databases' exports. The
// records are made up, in the forms those exports use.
func TestExplainExportVariants(t *testing.T) {
	t.Parallel()
	const (
		de     = "Wirkung der Spiegeltherapie auf die Armfunktion nach Schlaganfall"
		en     = "Effect of mirror therapy on arm function after stroke"
		long   = "Long-term outcomes of constraint-induced movement therapy for the paretic upper limb in chronic stroke: a randomised controlled trial with two years of follow-up in community rehabilitation services"
		lancet = "Intensive blood pressure lowering in patients with acute intracerebral haemorrhage"
	)
	ger := func(title string) research.RawPaper {
		return located(title, 2011, "Nervenarzt", "82", "4", "455-461", "Müller, K.", "Schmidt, B.")
	}
	nejm := func(title string) research.RawPaper {
		return located(title, 2013, "New England Journal of Medicine", "368", "25", "2355-2365", "Anderson, C. S.", "Heeley, E.")
	}
	// bare is the article without volume, issue or pages, so that only
	// the title, year, authors and journal decide.
	bare := func(title string) research.RawPaper {
		return research.RawPaper{Title: title, Year: 2013, Venue: "N Engl J Med", Authors: []string{"Anderson CS", "Heeley E"}}
	}
	cut := func(s string, n int) string { return s[:n] }
	tests := []struct {
		name string
		a, b research.RawPaper
		want string // verdict prefix of Explain
	}{
		// A translated title in square brackets beside the original, or
		// only one of the two.
		{"MedlineTranslationVsBoth", ger("[" + en + "]"), ger(de + " [" + en + "]"), "duplicate"},
		{"OriginalVsBoth", ger(de), ger(de + " [" + en + "]"), "duplicate"},
		{"ScopusEnglishWithOriginalVsOriginal", ger(en + " [" + de + "]"), ger(de), "duplicate"},
		{"ScopusVsMedline", ger(en + " [" + de + "]"), ger("[" + en + ".]"), "duplicate"},
		{"TranslationVsEnglish", ger("[" + en + "]"), ger(en), "duplicate"},
		{"TranslationWithoutPlace", research.RawPaper{Title: "[" + en + "]", Year: 2011, Authors: []string{"Müller K"}},
			research.RawPaper{Title: de + " [" + en + "]", Year: 2011, Authors: []string{"Müller, K."}, Venue: "Nervenarzt"}, "duplicate"},
		{"OtherArticleTranslated",
			located("[Effect of mirror therapy on gait after stroke]", 2011, "Nervenarzt", "82", "7", "880-886", "Müller, K."),
			ger(de + " [" + en + "]"), "distinct"},

		// Notes appended to titles: an erratum notice is another record,
		// the article with a note about its erratum is the article.
		{"ErratumAppearsInNote", nejm(lancet + " [Erratum appears in N Engl J Med 2013;369:2469]"), nejm(lancet), "duplicate"},
		{"CorrectedNote", nejm(lancet + ". [corrected]"), nejm(lancet), "duplicate"},
		{"WoSErratumNoticeVsArticle",
			located(lancet+" (vol 368, pg 2355, 2013)", 2013, "New England Journal of Medicine", "369", "26", "2573", "Anderson, C. S."),
			nejm(lancet), "distinct"},
		{"WoSErratumNoticeWithoutPlace",
			research.RawPaper{Title: lancet + " (vol 368, pg 2355, 2013)", Year: 2013, Venue: "New England Journal of Medicine", Authors: []string{"Anderson, C. S."}},
			research.RawPaper{Title: lancet, Year: 2013, Venue: "N Engl J Med", Authors: []string{"Anderson CS"}}, "distinct"},
		{"WoSErratumNoticeTwice",
			located(lancet+" (vol 368, pg 2355, 2013)", 2013, "New England Journal of Medicine", "369", "26", "2573", "Anderson, C. S."),
			located(lancet+" (Vol 368, Pg 2355, 2013).", 2013, "NEW ENGLAND JOURNAL OF MEDICINE", "369", "26", "2573", "Anderson, CS"), "duplicate"},
		{"EmbaseErratumNotice",
			research.RawPaper{Title: lancet + " (New England Journal of Medicine (2013) 368 (2355-2365))", Year: 2013, Authors: []string{"Anderson C.S."}},
			research.RawPaper{Title: lancet, Year: 2013, Authors: []string{"Anderson, C. S."}}, "distinct"},
		{"BracketedErratumWord", nejm(lancet + " [Erratum]"), nejm(lancet), "distinct"},
		{"CorrectionToVsArticle", nejm("Correction to: " + lancet), nejm(lancet), "distinct"},
		{"CommentaryVsArticle", nejm("Commentary: " + lancet), nejm(lancet), "distinct"},

		// Section labels prefixed to titles.
		{"CapitalLabelWithColon", bare("MEDICAL PROGRESS: " + lancet), bare(lancet), "duplicate"},
		{"CapitalLabelWithoutSeparator", bare("MEDICAL PROGRESS " + lancet), bare(lancet), "duplicate"},
		{"EditorialLabel", bare("Editorial: " + lancet), bare(lancet), "duplicate"},
		{"LetterLabel", bare("Letter: " + lancet), bare(lancet), "duplicate"},
		{"ReviewLabel", bare("Review: " + lancet), bare(lancet), "duplicate"},
		{"RetractedLabel", bare("RETRACTED: " + lancet), bare(lancet), "duplicate"},
		{"LabelIsPartOfTitle", bare("Review of " + lancet), bare(lancet), "distinct"},

		// Titles cut by an export's length limit.
		{"TruncatedMidWord", nejm(long), nejm(cut(long, 120)), "duplicate"},
		{"TruncatedWithEllipsis", nejm(long), nejm(cut(long, 100) + "..."), "duplicate"},
		{"TrailingPhraseAdded", nejm(lancet + " for the INTERACT2 investigators"), nejm(lancet), "duplicate"},
		{"TruncatedOtherPage", nejm(long), located(cut(long, 120), 2013, "New England Journal of Medicine", "368", "25", "2400-2401", "Anderson, C. S."), "distinct"},
		{"TruncatedWithoutPlace", research.RawPaper{Title: long, Year: 2013, Authors: []string{"Anderson, C. S."}},
			research.RawPaper{Title: cut(long, 120), Year: 2013, Authors: []string{"Anderson, C. S."}}, "distinct"},
		{"TruncatedOtherFirstAuthor", nejm(long), located(cut(long, 120), 2013, "New England Journal of Medicine", "368", "25", "2355-2365", "Heeley, E."), "distinct"},
		{"TruncatedTooShort", nejm(long), nejm(cut(long, 30)), "distinct"},

		// Recurring items: one title, one year, another issue or page.
		{"ColumnEveryIssuePageOne",
			located("Editor's comments", 2012, "Topics in Stroke Rehabilitation", "19", "2", "1", "Roth, E. J."),
			located("Editor's comments", 2012, "Topics in Stroke Rehabilitation", "19", "3", "1", "Roth, E. J."), "distinct"},
		{"LongColumnOtherPages",
			located("Highlights of this issue for clinicians working in stroke rehabilitation", 2012, "Topics in Stroke Rehabilitation", "19", "", "1-2", "Roth, E. J."),
			located("Highlights of this issue for clinicians working in stroke rehabilitation", 2012, "Topics in Stroke Rehabilitation", "19", "", "101-102", "Roth, E. J."), "distinct"},
		{"ReplyOtherVolume",
			located("Reply", 2012, "Stroke", "43", "1", "e5", "Smith, J."),
			located("Reply", 2012, "Stroke", "44", "3", "e22", "Smith, J."), "distinct"},
		{"ErrataOtherPages",
			located("Errata", 2012, "Archives of Physical Medicine and Rehabilitation", "93", "", "380", "Anonymous"),
			located("Errata", 2012, "Archives of Physical Medicine and Rehabilitation", "93", "", "1110", "Anonymous"), "distinct"},
		{"ResponseOtherIssue",
			located("Response to letter regarding article on early mobilisation after stroke", 2012, "Stroke", "43", "4", "e38", "Bernhardt, J."),
			located("Response to letter regarding article on early mobilisation after stroke", 2012, "Stroke", "43", "9", "e102", "Bernhardt, J."), "distinct"},
		{"SameIssueCombined", nejm(lancet), located(lancet, 2013, "N Engl J Med", "368", "25-26", "2355-65", "Anderson CS"), "duplicate"},

		// Authors written differently by two databases at the same place.
		{"GroupAuthorAtSamePlace", nejm(long), located(long, 2013, "N Engl J Med", "368", "25", "2355-2365", "INTERACT2 Investigators Group"), "duplicate"},
		{"NamesSwappedAtSamePlace", nejm(long), located(long, 2013, "N Engl J Med", "368", "25", "2355-2365", "Craig, Anderson S", "Emma, Heeley"), "duplicate"},
		{"TwoLettersUnderOneHeading",
			located(long, 2013, "Lancet", "381", "", "1710", "Bath, P. M."),
			located(long, 2013, "Lancet", "381", "", "1710", "Qureshi, A. I."), "distinct"},
		{"DroppedDigitAtSamePlace", nejm("p16INK4a expression in " + lancet), nejm("p6INK4a expression in " + lancet), "duplicate"},
		{"OtherDigitAtSamePlace", nejm("Phase 2 trial of " + lancet), nejm("Phase 3 trial of " + lancet), "distinct"},

		// Notes of other exports, and authors that name nobody.
		{"LetterNote", bare(lancet + " (Letter)"), bare(lancet), "duplicate"},
		{"NoAuthorsListed", nejm(lancet), located(lancet, 2013, "N Engl J Med", "368", "25", "2355-2365", "[No authors listed]"), "duplicate"},
		{"AnonymousVsNamed", nejm(lancet), located(lancet, 2013, "N Engl J Med", "368", "25", "2355-2365", "Anonymous"), "duplicate"},
		{"AnonymousElsewhere", nejm(lancet), located(lancet, 2013, "N Engl J Med", "368", "26", "2400-2401", "Anonymous"), "distinct"},

		// The same title in two journals is two records; pages forgive only
		// what exports do to them.
		{"TwoJournalsNoPlace",
			research.RawPaper{Title: lancet, Year: 2013, Venue: "Stroke", Authors: []string{"Anderson, C. S."}},
			research.RawPaper{Title: lancet, Year: 2013, Venue: "Cerebrovascular Diseases", Authors: []string{"Anderson, C. S."}}, "distinct"},
		{"AcronymOfJournal",
			research.RawPaper{Title: lancet, Year: 2013, Venue: "BMJ", Authors: []string{"Anderson, C. S."}},
			research.RawPaper{Title: lancet, Year: 2013, Venue: "British Medical Journal", Authors: []string{"Anderson, C. S."}}, "duplicate"},
		{"ELocatorVsPrintPages", located(long, 2013, "BMJ", "346", "", "f3056", "Anderson, C. S."), located(long, 2013, "BMJ", "346", "", "33-40", "Anderson CS"), "duplicate"},
		{"SupplementAbstractVsArticle", located(long, 2013, "Stroke", "44", "", "S42", "Anderson, C. S."), located(long, 2013, "Stroke", "44", "", "1234-1240", "Anderson CS"), "distinct"},
		{"RangeVsLastPage", located(long, 2013, "Stroke", "44", "", "1240", "Anderson, C. S."), located(long, 2013, "Stroke", "44", "", "1234-1240", "Anderson CS"), "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := dedup.Explain(tt.a, tt.b)
			require.True(t, strings.HasPrefix(got, tt.want), "Explain = %q, want prefix %q", got, tt.want)
			back := dedup.Explain(tt.b, tt.a)
			require.Equal(t, strings.SplitN(got, ":", 2)[0], strings.SplitN(back, ":", 2)[0], "the decision must not depend on order")
		})
	}
}

// TestDedupNoBridgeAcrossPlaces: a record without volume or pages matches
// each of two items with one title in two issues; it may join one of them,
// never make the two one record.
func TestDedupNoBridgeAcrossPlaces(t *testing.T) {
	t.Parallel()
	const title = "Clinical commentary on the management of spasticity after stroke in the community"
	papers := []research.RawPaper{
		located(title, 2012, "Topics in Stroke Rehabilitation", "19", "2", "101-102", "Roth, E. J."),
		{Title: title, Year: 2012, Venue: "Top Stroke Rehabil", Authors: []string{"Roth EJ"}},
		located(title, 2012, "Topics in Stroke Rehabilitation", "19", "5", "401-402", "Roth, E. J."),
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {1, 2, 0}} {
		in := make([]research.RawPaper, len(order))
		for i, o := range order {
			in[i] = papers[o]
		}
		a, err := dedup.Analyze(t.Context(), in)
		require.NoError(t, err)
		require.Len(t, a.Clusters, 2, "order %v: %v", order, a.Clusters)
		for _, c := range a.Clusters {
			if len(c) == 2 {
				require.Equal(t, "2", in[c[0]].Issue+in[c[1]].Issue, "order %v: the first issue wins, whatever the order", order)
			}
		}
	}
}

// TestExplainNumbersAsWords: numbers agree however they are written, and
// still tell parts and phases apart.
func TestExplainNumbersAsWords(t *testing.T) {
	t.Parallel()
	rec := func(title string) research.RawPaper {
		return research.RawPaper{Title: title, Year: 2014, Venue: "Stroke", Authors: []string{"Bernhardt, J.", "Langhorne, P."}}
	}
	const tail = " trial of very early mobilisation after acute stroke in hospital stroke units"
	tests := []struct {
		name, a, b, want string
	}{
		{"RomanPhase", "A phase II" + tail, "A phase 2" + tail, "duplicate"},
		{"PhaseOneRoman", "A phase I" + tail, "A phase 1" + tail, "duplicate"},
		{"WordsForNumbers", "Two-year outcomes of a" + tail, "2-year outcomes of a" + tail, "duplicate"},
		{"OtherPhase", "A phase II" + tail, "A phase III" + tail, "distinct"},
		{"OtherPhaseWritten", "A phase II" + tail, "A phase 3" + tail, "distinct"},
		{"OtherYears", "Two-year outcomes of a" + tail, "Three-year outcomes of a" + tail, "distinct"},
		{"Ordinals", "Second report of a" + tail, "2nd report of a" + tail, "duplicate"},
		{"OtherOrdinal", "Second report of a" + tail, "Third report of a" + tail, "distinct"},
		{"LanguageNote", "A phase 2" + tail + ". German", "A phase 2" + tail, "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := dedup.Explain(rec(tt.a), rec(tt.b))
			require.True(t, strings.HasPrefix(got, tt.want), "Explain = %q, want prefix %q", got, tt.want)
		})
	}
}
