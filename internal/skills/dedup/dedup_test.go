package dedup_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
	"quarry/internal/skills/dedup"
)

// art is a journal article with the fields the Rathbone sets carry.
func art(title string, year int, venue, vol, pages string, authors ...string) research.RawPaper {
	return research.RawPaper{Title: title, Year: year, Venue: venue, Volume: vol, Pages: pages, Authors: authors}
}

func TestExplainPairs(t *testing.T) {
	t.Parallel()
	const long = "Human papillomavirus testing in the follow-up of women treated for cervical intraepithelial neoplasia"
	base := art(long, 2010, "Journal of Clinical Virology", "48", "112-118", "Smith, J.", "Doe, A.", "Roe, R.")
	with := func(f func(p *research.RawPaper)) research.RawPaper {
		p := base
		p.Authors = append([]string(nil), base.Authors...)
		f(&p)
		return p
	}
	tests := []struct {
		name string
		a, b research.RawPaper
		want string // verdict prefix of Explain
	}{
		// Same paper, spelt differently.
		{"Identical", base, base, "duplicate"},
		{"AllCaps", base, with(func(p *research.RawPaper) { p.Title = strings.ToUpper(long) }), "duplicate"},
		{"TrailingPeriod", base, with(func(p *research.RawPaper) { p.Title = long + "." }), "duplicate"},
		{"ThePrefix", base, with(func(p *research.RawPaper) { p.Title = "The " + long }), "duplicate"},
		{"DatabaseNotes", base, with(func(p *research.RawPaper) { p.Title = long + ". [Review] [33 refs]" }), "duplicate"},
		{"NestedErratumNote", base, with(func(p *research.RawPaper) {
			p.Title = long + ".[Erratum appears in J Clin Virol. 2011;50(1):93 Note: Roe, R [added]]"
		}), "duplicate"},
		{"Typo", base, with(func(p *research.RawPaper) { p.Title = strings.Replace(long, "intraepithelial", "intraepitelial", 1) }), "duplicate"},
		{"AuthorFormats", base, with(func(p *research.RawPaper) { p.Authors = []string{"John Smith", "Alice Doe", "R. Roe"} }), "duplicate"},
		{"PubMedAuthorFormat", base, with(func(p *research.RawPaper) { p.Authors = []string{"Smith J", "Doe A"} }), "duplicate"},
		{"JournalAbbreviation", base, with(func(p *research.RawPaper) { p.Venue = "J Clin Virol" }), "duplicate"},
		{"YearOffByOneSameJournal", base, with(func(p *research.RawPaper) { p.Year = 2011; p.Venue = "J Clin Virol" }), "duplicate"},
		{"PageRangeAbbreviated", base, with(func(p *research.RawPaper) { p.Pages = "112-8" }), "duplicate"},
		{"SubtitleMissing",
			art("Unilateral neglect in stroke patients: a comparative study", 2013, "Hong Kong J Occup Ther", "29", "126-134", "Chan, D. Y. W."),
			art("Unilateral Neglect in Stroke Patients", 2013, "Hong Kong Journal of Occupational Therapy", "29", "126-134", "Chan, Dick Y. W."),
			"duplicate"},
		{"HTMLEntitiesAndTags",
			art("Tom &amp; Jerry: a study of <i>Mus musculus</i> and <b>Felis catus</b> interactions", 2019, "", "", "", "Hanna, W."),
			art("Tom & Jerry: A study of Mus musculus and Felis catus interactions", 2019, "", "", "", "William Hanna"),
			"duplicate"},
		{"LaTeX",
			art(`Caf\'{e} culture and the {BERT} model: \emph{attention} in Montr\'eal`, 2021, "", "", "", "Tremblay, M."),
			art("Café culture and the BERT model: attention in Montréal", 2021, "", "", "", "Marie Tremblay"),
			"duplicate"},
		{"GreekLetter",
			art("Interferon-γ as a prognostic marker for clearance of high-risk human papillomavirus", 2008, "Gynecol Oncol", "108", "543-548", "Song, S H"),
			art("Interferon-gamma as a prognostic marker for clearance of high-risk human papillomavirus", 2008, "Gynecologic Oncology", "108", "543-548", "Song, S.-H."),
			"duplicate"},
		{"AmpersandForAnd",
			art("Modeling & Control of an Untethered Magnetic Gripper", 2021, "ICRA", "", "", "Yunxuan Mao"),
			art("Modeling and control of an untethered magnetic gripper", 2021, "ICRA", "", "", "Mao, Y."),
			"duplicate"},
		{"ShortTitleSameVenueYearAuthors",
			art("Sobolev GAN", 2018, "ICLR", "", "", "Youssef Mroueh", "Chun-Liang Li"),
			art("SOBOLEV GAN", 2018, "ICLR", "", "", "Mroueh, Y.", "Li, C."),
			"duplicate"},
		{"SameDOIDifferentSpelling",
			research.RawPaper{Title: long, DOI: "https://doi.org/10.1016/J.JCV.2010.03.001"},
			research.RawPaper{Title: long + ".", DOI: "doi:10.1016/j.jcv.2010.03.001"},
			"duplicate: same_doi"},
		{"SamePMID", research.RawPaper{Title: long, PMID: "123456"}, research.RawPaper{Title: strings.ToLower(long), PMID: "123456"}, "duplicate: same_pmid"},

		// Look alike, but are not the same record.
		{"Erratum", base, with(func(p *research.RawPaper) { p.Title = "Erratum: " + long }), "distinct"},
		{"CorrectionTo", base, with(func(p *research.RawPaper) { p.Title = "Correction to: " + long }), "distinct"},
		{"ReplyTo", base, with(func(p *research.RawPaper) { p.Title = "Reply to: " + long }), "distinct"},
		{"CommentOn", base, with(func(p *research.RawPaper) { p.Title = "Comment on \"" + long + "\"" }), "distinct"},
		{"PartIvsPartII",
			with(func(p *research.RawPaper) { p.Title = long + ". Part I" }),
			with(func(p *research.RawPaper) { p.Title = long + ". Part II" }), "distinct"},
		{"PartOneVsPartTwo",
			with(func(p *research.RawPaper) { p.Title = long + ", part one" }),
			with(func(p *research.RawPaper) { p.Title = long + ", part two" }), "distinct"},
		{"PhaseNumbers",
			with(func(p *research.RawPaper) { p.Title = "A phase 2 trial of " + long }),
			with(func(p *research.RawPaper) { p.Title = "A phase 3 trial of " + long }), "distinct"},
		{"AbstractVsArticle", base, with(func(p *research.RawPaper) { p.Volume = "42"; p.Pages = "S79" }), "distinct"},
		{"ConferenceVsJournal",
			art("Cultural universality versus particularity in CMC", 2004, "Journal of Global Information Technology Management", "7", "47-65", "Stahl, Bernd Carsten"),
			art("Cultural universality versus particularity in CMC", 2003, "Americas Conference on Information Systems", "", "", "Stahl, Bernd-Carsten"),
			"distinct"},
		{"DifferentDOIsSameTitle",
			research.RawPaper{Title: "Introduction to the Minitrack on Crowdsourcing and Digital Workforce", Year: 2021, DOI: "10.24251/HICSS.2021.510", Authors: []string{"Deng, Xuefei"}},
			research.RawPaper{Title: "Introduction to the Minitrack on Crowdsourcing and Digital Workforce", Year: 2022, DOI: "10.24251/HICSS.2022.544", Authors: []string{"Deng, Xuefei"}},
			"distinct"},
		{"YearsTwoApart", base, with(func(p *research.RawPaper) { p.Year = 2012; p.Volume = ""; p.Pages = "" }), "distinct"},
		{"DifferentAuthors", base, with(func(p *research.RawPaper) { p.Authors = []string{"Kowalski, P", "Nowak, Z", "Wojcik, T"} }), "distinct"},
		{"ShortTitleEditorial",
			art("Editorial", 2015, "Journal of Clinical Virology", "", "", "Smith, J."),
			art("Editorial", 2015, "Journal of Clinical Virology", "", "", "Smith, J."), "distinct"},
		{"BookReviewSameVenue",
			art("Book review", 2015, "Brain Injury", "", "", "Merker, B."),
			art("Book review", 2015, "Brain Injury", "", "", "Merker, B."), "distinct"},
		{"TwoAcronymVenues",
			art("Continuous-time flows for efficient inference and density estimation", 2018, "ICLR", "", "", "Changyou Chen"),
			art("Continuous-Time Flows for Efficient Inference and Density Estimation", 2018, "ICML", "", "", "Chen, C."), "distinct"},
		{"NextYearOtherVenue", base, with(func(p *research.RawPaper) { p.Year = 2011; p.Venue = "Lancet Oncology"; p.Volume = ""; p.Pages = "" }), "distinct"},

		// Versions of one work, kept apart but linked.
		{"SameDOIDifferentTitles",
			research.RawPaper{Title: long, DOI: "10.1000/book.1"},
			research.RawPaper{Title: "Chapter 3: Statistical methods for cohort studies", DOI: "10.1000/book.1"},
			"related"},
		{"PreprintAndPublication",
			research.RawPaper{Title: "Attention is all you need", Year: 2017, ArxivID: "1706.03762v5", Authors: []string{"Ashish Vaswani"}, Venue: "arXiv"},
			research.RawPaper{Title: "Attention Is All You Need", Year: 2017, Venue: "NeurIPS", DOI: "10.5555/3295222.3295349", Authors: []string{"Vaswani, A."}},
			"related"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := dedup.Explain(tt.a, tt.b)
			require.True(t, strings.HasPrefix(got, tt.want), "Explain = %q, want prefix %q", got, tt.want)
			require.Equal(t, got, dedup.Explain(tt.b, tt.a), "the decision must not depend on order")
		})
	}
}

func TestDedupMergesRichestMetadata(t *testing.T) {
	t.Parallel()
	title := "Deep residual learning for image recognition in medical imaging"
	papers := []research.RawPaper{
		{ID: "s2:1", Title: title, Year: 2016, Authors: []string{"He, K."}, Source: "semantic_scholar", Rank: 4,
			Abstract: "Short."},
		{ID: "oa:9", Title: strings.ToUpper(title) + ".", Year: 2016, Authors: []string{"Kaiming He", "Xiangyu Zhang", "Shaoqing Ren"},
			Source: "openalex", Rank: 2, DOI: "10.1109/CVPR.2016.90", Venue: "CVPR",
			Abstract: "A much longer abstract that a reviewer would rather read."},
		{ID: "pm:7", Title: title, Year: 2016, Authors: []string{"He K", "Zhang X"}, Source: "pubmed", PMID: "999", DOI: "10.1109/cvpr.2016.90"},
		{ID: "other", Title: "A completely different paper on protein folding", Year: 2020, Authors: []string{"Jumper, J."}, Source: "openalex"},
	}
	out, stats, err := dedup.New().Dedup(context.Background(), papers)
	require.NoError(t, err)
	require.Equal(t, research.DedupStats{Input: 4, Output: 2, Merged: 2, Related: 0}, stats)
	require.Len(t, out, 2)

	m := out[0]
	require.Equal(t, "doi:10.1109/cvpr.2016.90", m.ID, "the merged record's ID is its StableID")
	require.Equal(t, research.StableID(m), m.ID)
	require.Equal(t, "A much longer abstract that a reviewer would rather read.", m.Abstract)
	require.Equal(t, []string{"Kaiming He", "Xiangyu Zhang", "Shaoqing Ren"}, m.Authors)
	require.Equal(t, "999", m.PMID)
	require.Equal(t, "CVPR", m.Venue)
	require.Equal(t, 2, m.Rank, "best rank of the merged records")
	require.Equal(t, []string{"semantic_scholar", "openalex", "pubmed"}, m.Sources)
	require.Equal(t, "A completely different paper on protein folding", out[1].Title)

	a, err := dedup.Analyze(context.Background(), papers)
	require.NoError(t, err)
	require.Equal(t, [][]int{{0, 1, 2}, {3}}, a.Clusters)
	require.Len(t, a.Merges, 2, "a spanning forest: one link per merged record")
	reasons := map[dedup.Reason]bool{}
	for _, l := range a.Merges {
		reasons[l.Reason] = true
		require.Less(t, l.A, l.B)
		require.NotEmpty(t, l.Detail)
	}
	require.True(t, reasons[dedup.SameDOI], "records 1 and 2 share a DOI: %+v", a.Merges)
}

func TestDedupMarksVersionsRelated(t *testing.T) {
	t.Parallel()
	papers := []research.RawPaper{
		{ID: "arxiv:1706.03762", Title: "Attention is all you need", Year: 2017, ArxivID: "1706.03762", Authors: []string{"Ashish Vaswani"}, Source: "arxiv"},
		{ID: "x", Title: "Attention Is All You Need.", Year: 2017, Venue: "Advances in Neural Information Processing Systems", Authors: []string{"Vaswani, A."}, Source: "openalex"},
		// Two works filed under one DOI keep distinct IDs.
		{Title: "Handbook of systematic review methods", DOI: "10.1000/book.1", Source: "crossref"},
		{Title: "Chapter 3: Statistical methods for cohort studies", DOI: "10.1000/book.1", Source: "crossref"},
	}
	out, stats, err := dedup.Deduplicator{}.Dedup(context.Background(), papers)
	require.NoError(t, err)
	require.Equal(t, research.DedupStats{Input: 4, Output: 4, Merged: 0, Related: 2}, stats)
	ids := map[string]bool{}
	for _, p := range out {
		require.False(t, ids[p.ID], "duplicate output ID %s", p.ID)
		ids[p.ID] = true
		require.Len(t, p.Related, 1, "%s", p.Title)
	}
	require.Equal(t, []string{out[1].ID}, out[0].Related)
	require.Equal(t, []string{out[0].ID}, out[1].Related)
	require.Equal(t, []string{out[3].ID}, out[2].Related)
	require.Equal(t, []string{out[2].ID}, out[3].Related)
	require.NoError(t, research.PaperCollection{Papers: scored(out)}.Validate())
}

func TestDedupChainCannotJoinConflictingDOIs(t *testing.T) {
	t.Parallel()
	// b matches both a and c by title, but a and c carry different DOIs:
	// they must not end up in one cluster through b.
	title := "Effect of cervical cytologic status on human papillomavirus type 16 DNA load"
	papers := []research.RawPaper{
		{Title: title, Year: 2008, DOI: "10.1/aaa", Authors: []string{"Xi, L F"}},
		{Title: title, Year: 2008, Authors: []string{"Xi, L F"}},
		{Title: title, Year: 2008, DOI: "10.1/ccc", Authors: []string{"Xi, L F"}},
	}
	a, err := dedup.Analyze(context.Background(), papers)
	require.NoError(t, err)
	require.Len(t, a.Clusters, 2, "%v", a.Clusters)
}

func TestDedupEmptyAndCancelled(t *testing.T) {
	t.Parallel()
	out, stats, err := dedup.New().Dedup(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, out)
	require.Equal(t, research.DedupStats{}, stats)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	many := make([]research.RawPaper, 5000)
	for i := range many {
		many[i] = research.RawPaper{Title: "Paper number " + strings.Repeat("x", i%50) + " on things", Year: 2000 + i%20}
	}
	_, _, err = dedup.New().Dedup(ctx, many)
	require.ErrorIs(t, err, context.Canceled)
}

func scored(ps []research.RawPaper) []research.ScoredPaper {
	out := make([]research.ScoredPaper, len(ps))
	for i, p := range ps {
		out[i] = research.ScoredPaper{RawPaper: p, Score: 0.5, Reasons: []string{"test score"}}
	}
	return out
}

// TestDedupAgainst checks a next page's records are merged among
// themselves and dropped where they duplicate a record already kept.
func TestDedupAgainst(t *testing.T) {
	t.Parallel()
	known := []research.RawPaper{
		{ID: "k1", Title: "Sleep deprivation and working memory", DOI: "10.1/a", Year: 2020, Source: "local"},
	}
	papers := []research.RawPaper{
		{ID: "n1", Title: "Sleep Deprivation and Working Memory.", DOI: "10.1/A", Year: 2020, Source: "openalex"},
		{ID: "n2", Title: "Napping restores vigilance", DOI: "10.1/b", Year: 2019, Source: "local"},
		{ID: "n3", Title: "Napping restores vigilance", DOI: "10.1/b", Year: 2019, Source: "openalex"},
	}
	out, stats, err := dedup.New().DedupAgainst(context.Background(), known, papers)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "Napping restores vigilance", out[0].Title)
	require.ElementsMatch(t, []string{"local", "openalex"}, out[0].Sources)
	require.Equal(t, research.DedupStats{Input: 3, Output: 1, Merged: 2}, stats)
}

// A merged record's author split comes from the same record as its
// author list, never from another source's shorter or longer list.
func TestDedupKeepsTheSplitWithItsAuthors(t *testing.T) {
	t.Parallel()
	title := "Endoscopic management of colonic strictures in adults"
	papers := []research.RawPaper{
		{ID: "pm:1", Title: title, Year: 2019, DOI: "10.1000/x", Source: "pubmed",
			Authors:     []string{"Louis M. Wong Kee Song"},
			AuthorNames: []research.AuthorName{{Family: "Wong Kee Song", Given: "Louis M."}}},
		{ID: "oa:1", Title: title, Year: 2019, DOI: "10.1000/x", Source: "openalex",
			Authors: []string{"Louis M. Wong Kee Song", "Jane Roe"}},
		{ID: "cr:1", Title: title, Year: 2019, DOI: "10.1000/x", Source: "crossref",
			Authors:     []string{"Louis M. Wong Kee Song", "Jane Roe", "National Nurses United"},
			AuthorNames: []research.AuthorName{{Family: "Wong Kee Song", Given: "Louis M."}, {Family: "Roe", Given: "Jane"}, {Literal: "National Nurses United"}}},
	}
	out, _, err := dedup.New().Dedup(context.Background(), papers)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, papers[2].Authors, out[0].Authors)
	require.Equal(t, papers[2].AuthorNames, out[0].AuthorNames)

	out, _, err = dedup.New().Dedup(context.Background(), papers[:2])
	require.NoError(t, err)
	require.Equal(t, papers[1].Authors, out[0].Authors)
	require.Nil(t, out[0].AuthorNames, "OpenAlex gave display names only: no split from a shorter list")
}
