package demo

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// notAPerson matches the words that stand for the rest of a truncated
// author list ("et al.", "and others", BibTeX's "others"): exported as a
// person, "et al." reads "… and et al." in BibTeX and gives the
// deduplicator the surname "al".
var notAPerson = regexp.MustCompile(`(?i)(^|\s)(et\.?\s*al\.?|others|and others)$`)

// arxivID matches new-style (YYMM.NNNNN) and old-style (archive/YYMMNNN) IDs.
var arxivID = regexp.MustCompile(`^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})$`)

func entries(t *testing.T) []Entry {
	t.Helper()
	es, err := Entries()
	require.NoError(t, err)
	return es
}

func TestParseRejectsBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantN   int
		wantErr bool
	}{
		{"Empty", "", 0, false},
		{"BlankLinesSkipped", "\n{\"title\":\"A\"}\n\n{\"title\":\"B\"}\n", 2, false},
		{"BrokenJSON", "{\"title\":\"A\"\n", 0, true},
		{"UnknownField", "{\"title\":\"A\",\"abstract\":\"x\"}\n", 0, true},
		{"TrailingData", "{\"title\":\"A\"} {\"title\":\"B\"}\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			es, err := parse([]byte(tt.in))
			if tt.wantErr {
				require.Error(t, err)
				require.Equal(t, fault.EInternal, fault.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			require.Len(t, es, tt.wantN)
		})
	}
}

func TestPapersMapsEntries(t *testing.T) {
	t.Parallel()
	es := entries(t)
	ps, err := Papers()
	require.NoError(t, err)
	require.Len(t, ps, len(es))
	for i, p := range ps {
		e := es[i]
		require.Equal(t, e.Title, p.Title)
		require.Equal(t, e.Summary, p.Abstract, "summary becomes the searchable abstract")
		require.Equal(t, Source, p.Source)
		require.Equal(t, research.StableID(p), p.ID)
		require.Equal(t, e.Year, p.Year)
		require.Equal(t, e.Authors, p.Authors)
	}
}

func TestAtLeast300Records(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, len(entries(t)), 300)
}

func TestEveryRecordIsWellFormed(t *testing.T) {
	t.Parallel()
	for i, e := range entries(t) {
		p := e.Paper()
		where := func(msg string) string { return msg + ": line " + strconv.Itoa(i+1) + " " + e.Title }
		require.NoError(t, p.Validate(), where("validate"))
		require.NotEmpty(t, strings.TrimSpace(e.Venue), where("venue"))
		require.NotEmpty(t, e.Authors, where("authors"))
		for _, a := range e.Authors {
			require.Equal(t, strings.TrimSpace(a), a, where("author whitespace"))
			require.NotEmpty(t, a, where("empty author"))
			require.NotRegexp(t, notAPerson, a, where("not an author (a truncated list sets authors_truncated)"))
		}
		require.GreaterOrEqual(t, e.Year, 1900, where("year"))
		require.LessOrEqual(t, e.Year, 2026, where("year"))
		n := utf8.RuneCountInString(e.Summary)
		require.GreaterOrEqual(t, n, 150, where("summary too short"))
		require.LessOrEqual(t, n, 900, where("summary too long"))
		require.NotEmpty(t, e.FieldsOfStudy, where("fields_of_study"))
		if e.DOI != "" {
			require.NotEmpty(t, research.NormalizeDOI(e.DOI), where("doi malformed"))
			require.Equal(t, e.DOI, strings.TrimSpace(e.DOI), where("doi whitespace"))
			require.Equal(t, "https://doi.org/"+e.DOI, e.URL, where("url derives from doi"))
		}
		if e.ArxivID != "" {
			require.Regexp(t, arxivID, e.ArxivID, where("arxiv id malformed"))
			if e.DOI == "" {
				require.Equal(t, "https://arxiv.org/abs/"+e.ArxivID, e.URL, where("url derives from arxiv id"))
			}
		}
		if e.DOI == "" && e.ArxivID == "" {
			require.Empty(t, e.URL, where("url without an identifier"))
		}
	}
}

// TestTruncatedAuthorLists: a paper whose byline is too long to list
// keeps its first authors and says so, rather than naming "et al." as an
// author; listing fewer than ten would not be a reason to truncate.
func TestTruncatedAuthorLists(t *testing.T) {
	t.Parallel()
	truncated := 0
	for _, e := range entries(t) {
		if e.AuthorsTruncated {
			truncated++
			require.GreaterOrEqual(t, len(e.Authors), 10, e.Title)
		}
	}
	require.Positive(t, truncated)
	es, err := parse([]byte(`{"title":"A","authors":["Ann Lee"],"authors_truncated":true}`))
	require.NoError(t, err)
	require.True(t, es[0].AuthorsTruncated)
	require.Equal(t, []string{"Ann Lee"}, es[0].Paper().Authors)
}

func TestIDsAndTitlesAreUnique(t *testing.T) {
	t.Parallel()
	ids := map[string]string{}
	titles := map[string]string{}
	arxiv := map[string]string{}
	for _, e := range entries(t) {
		p := e.Paper()
		prev, dup := ids[p.ID]
		require.False(t, dup, "id %s shared by %q and %q", p.ID, prev, e.Title)
		ids[p.ID] = e.Title
		nt := research.NormalizeTitle(e.Title)
		prev, dup = titles[nt]
		require.False(t, dup, "title repeated: %q and %q", prev, e.Title)
		titles[nt] = e.Title
		if e.ArxivID != "" {
			a := research.NormalizeArxivID(e.ArxivID)
			prev, dup = arxiv[a]
			require.False(t, dup, "arXiv %s shared by %q and %q", a, prev, e.Title)
			arxiv[a] = e.Title
		}
	}
}

func TestFieldsOfStudyAreBroad(t *testing.T) {
	t.Parallel()
	counts := map[string]int{}
	for _, e := range entries(t) {
		for _, f := range e.FieldsOfStudy {
			counts[f]++
		}
	}
	big := 0
	for f, n := range counts {
		t.Logf("%-32s %d", f, n)
		if n >= 15 {
			big++
		}
	}
	require.GreaterOrEqual(t, big, 8, "need at least 8 fields with 15+ papers each")
}

// TestSampleQueriesFindPapers checks the offline demo searches have material:
// every key word of each query must occur together in at least three records.
func TestSampleQueriesFindPapers(t *testing.T) {
	t.Parallel()
	es := entries(t)
	texts := make([]string, len(es))
	for i, e := range es {
		texts[i] = strings.ToLower(e.Title + " " + e.Summary)
	}
	tests := []struct {
		query    string
		keywords []string
		min      int
	}{
		{"transformer attention", []string{"transformer", "attention"}, 10},
		{"systematic review screening automation", []string{"systematic review", "screening"}, 5},
		{"statins cardiovascular prevention", []string{"statin", "cardiovascular", "prevent"}, 5},
		{"raft consensus", []string{"raft", "consensus"}, 3},
		{"covid-19 vaccine efficacy", []string{"covid-19", "vaccine", "efficacy"}, 5},
		{"deep learning medical imaging", []string{"deep learning", "medical", "imaging"}, 5},
		{"climate change crop yields", []string{"climate", "crop", "yield"}, 5},
		{"sleep and memory", []string{"sleep", "memory"}, 5},
		{"crispr gene editing", []string{"crispr", "gene", "editing"}, 5},
		{"dropout regularization", []string{"dropout", "regularization"}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			hits := 0
			for _, text := range texts {
				all := true
				for _, k := range tt.keywords {
					if !strings.Contains(text, k) {
						all = false
						break
					}
				}
				if all {
					hits++
				}
			}
			require.GreaterOrEqual(t, hits, tt.min, "records matching all of %v", tt.keywords)
			require.GreaterOrEqual(t, hits, 3)
		})
	}
}
