package query_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/fault"
	"quarry/internal/skills/query"
)

func w(text string) query.Term          { return query.Term{Text: text} }
func ph(text string) query.Term         { return query.Term{Text: text, Phrase: true} }
func and(ts ...query.Term) query.Clause { return query.Clause{Any: ts} }
func not(ts ...query.Term) query.Clause { return query.Clause{Not: true, Any: ts} }

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		want      query.AST
		canonical string
	}{
		{"Word", "sepsis", query.AST{Clauses: []query.Clause{and(w("sepsis"))}}, "sepsis"},
		{"ImplicitAnd", "sepsis  children", query.AST{Clauses: []query.Clause{and(w("sepsis")), and(w("children"))}}, "sepsis children"},
		{"ExplicitAndDropped", "sepsis AND children", query.AST{Clauses: []query.Clause{and(w("sepsis")), and(w("children"))}}, "sepsis children"},
		{"Phrase", `"machine   learning"`, query.AST{Clauses: []query.Clause{and(ph("machine learning"))}}, `"machine learning"`},
		{"QuotedSingleWordStaysExact", `"ml"`, query.AST{Clauses: []query.Clause{and(ph("ml"))}}, `"ml"`},
		{"Group", `(ml OR "machine learning" OR ai)`, query.AST{Clauses: []query.Clause{and(w("ml"), ph("machine learning"), w("ai"))}}, `(ml OR "machine learning" OR ai)`},
		{"BareOrIsAGroup", `sepsis ml OR ai`, query.AST{Clauses: []query.Clause{and(w("sepsis")), and(w("ml"), w("ai"))}}, `sepsis (ml OR ai)`},
		{"OrChainsFlatten", `(a OR b) OR c`, query.AST{Clauses: []query.Clause{and(w("a"), w("b"), w("c"))}}, `(a OR b OR c)`},
		{"SingleGroupUnwrapped", `(a) b`, query.AST{Clauses: []query.Clause{and(w("a")), and(w("b"))}}, `a b`},
		{"MinusWord", `sepsis -mice`, query.AST{Clauses: []query.Clause{and(w("sepsis")), not(w("mice"))}}, `sepsis -mice`},
		{"NotPhrase", `sepsis NOT "case report"`, query.AST{Clauses: []query.Clause{and(w("sepsis")), not(ph("case report"))}}, `sepsis -"case report"`},
		{"NotGroup", `sepsis NOT (mice OR rats)`, query.AST{Clauses: []query.Clause{and(w("sepsis")), not(w("mice"), w("rats"))}}, `sepsis -(mice OR rats)`},
		{"HyphenInsideWord", `covid-19 long-term`, query.AST{Clauses: []query.Clause{and(w("covid-19")), and(w("long-term"))}}, `covid-19 long-term`},
		{"LowercaseOperatorsAreWords", `cats or dogs and not mice`, query.AST{Clauses: []query.Clause{and(w("cats")), and(w("or")), and(w("dogs")), and(w("and")), and(w("not")), and(w("mice"))}}, `cats or dogs and not mice`},
		{"QuotedOperatorIsATerm", `"OR" logic`, query.AST{Clauses: []query.Clause{and(ph("OR")), and(w("logic"))}}, `"OR" logic`},
		{"SyntaxCharsInWord", `title:sepsis child*`, query.AST{Clauses: []query.Clause{and(w("title:sepsis")), and(w("child*"))}}, `title:sepsis child*`},
		{"Unicode", `Ärzte 機械学習`, query.AST{Clauses: []query.Clause{and(w("Ärzte")), and(w("機械学習"))}}, `Ärzte 機械学習`},
		{"NewlinesAreSpace", "a\n\tb", query.AST{Clauses: []query.Clause{and(w("a")), and(w("b"))}}, `a b`},
		{"QuotedSyntaxCharsAreText", `"sleep^2" "[18F]FDG"`, query.AST{Clauses: []query.Clause{and(ph("sleep^2")), and(ph("[18F]FDG"))}}, `"sleep^2" "[18F]FDG"`},
		{"PunctuationInsideAWord", `C++ R&D covid-19? x*`, query.AST{Clauses: []query.Clause{and(w("C++")), and(w("R&D")), and(w("covid-19?")), and(w("x*"))}}, `C++ R&D covid-19? x*`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := query.Parse(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.canonical, got.String())
			again, err := query.Parse(got.String())
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		message string // a fragment of the message the researcher sees
	}{
		{"Empty", "", "empty"},
		{"Blank", "   \n", "empty"},
		{"UnclosedQuote", `"machine learning`, "never closed"},
		{"UnclosedQuoteLater", `a "b" "c`, "position 7"},
		{"EmptyQuotes", `a ""`, "empty quotes"},
		{"UnclosedParen", `(a OR b`, "never closed"},
		{"StrayCloseParen", `a)`, "closes nothing"},
		{"EmptyGroup", `()`, "empty"},
		{"NestedGroup", `(a OR (b OR c))`, "nested"},
		{"AndInsideGroup", `(a b)`, "OR"},
		{"NegationInsideGroup", `(a OR -b)`, "only words and phrases"},
		{"OnlyExclusions", `-mice NOT rats`, "only excludes"},
		{"DanglingOr", `a OR`, "nothing after"},
		{"LeadingOr", `OR a`, "OR"},
		{"DoubleOr", `a OR OR b`, "OR"},
		{"DanglingNot", `a NOT`, "exclusion"},
		{"DoubleNot", `a NOT NOT b`, "exclusion"},
		{"LoneMinus", `a - b`, "'-'"},
		{"DoubleMinus", `a --b`, "'-'"},
		{"MinusBeforeOr", `a -b OR c`, "ambiguous"},
		{"OrBeforeExclusion", `a OR -b`, "exclusion cannot"},
		{"LeadingAnd", `AND a`, "nothing before"},
		{"TrailingAnd", `a AND`, "followed by a term"},
		{"AndOr", `a AND OR b`, "followed by a term"},
		{"ControlChar", "a\x00b", "control character"},
		{"ControlInPhrase", "\"a\x07b\"", "control character"},
		{"InvalidUTF8", "a\xffb", "UTF-8"},
		{"TooLong", strings.Repeat("a ", query.MaxLength), "longer than"},
		{"OnlyPunctuation", `*`, `the query has no word to search for`},
		{"OnlyPunctuationAndOperators", `* OR ?`, `no word to search for`},
		{"QuotedPunctuation", `"*"`, `no word to search for`},
		{"PunctuationTerm", `sleep *`, `"*" at position 7 has no letter or digit`},
		{"ExcludedPunctuation", `sleep -&`, `"&" at position 8 has no letter or digit`},
		{"Boost", `sleep^2 memory`, `"^" in sleep^2 (position 6) is not query syntax: boosting`},
		{"Braces", `{heart attack}`, `"{" in {heart (position 1) is not query syntax`},
		{"FieldTag", `sepsis[tiab]`, `"[" in sepsis[tiab] (position 7) is not query syntax: field tags`},
		{"Proximity", `"sleep memory"~3`, `"~" in ~3 (position 15) is not query syntax: proximity`},
		{"Pipe", `sleep|memory`, `write OR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := query.Parse(tt.in)
			require.Error(t, err)
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			require.Contains(t, fault.ErrorMessage(err), tt.message)
		})
	}
}

func TestNewTermCleans(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		phrase bool
		want   query.Term
	}{
		{"sepsis", false, w("sepsis")},
		{"  heart   attack ", false, ph("heart attack")},
		{`say "hi"`, false, ph("say hi")},
		{"-minus", false, ph("-minus")},
		{"OR", false, ph("OR")},
		{"a\x00b", false, ph("a b")},
		{"exact", true, ph("exact")},
		{"sleep^2", false, ph("sleep^2")},
		{"[18F]FDG", false, ph("[18F]FDG")},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := query.NewTerm(tt.in, tt.phrase)
			require.Equal(t, tt.want, got)
			q := query.AST{Clauses: []query.Clause{and(got)}}
			require.NoError(t, q.Validate())
			back, err := query.Parse(q.String())
			require.NoError(t, err)
			require.Equal(t, q, back)
		})
	}
}

// TestNewTermDropsWhatCannotBeSearched: text with no letter or digit
// becomes the empty term, which callers skip, rather than a term that
// matches nothing (or, AND-ed, makes the whole local search match nothing).
func TestNewTermDropsWhatCannotBeSearched(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"&", "*", " - ", `"`, "^^"} {
		require.Empty(t, query.NewTerm(in, false).Text, in)
		require.Empty(t, query.NewTerm(in, true).Text, in)
	}
	require.Equal(t, []query.Clause{and(w("sleep"))}, query.Words("sleep", "&").Clauses)
	// A builder that made a clause of such terms gets a text that parses,
	// not "-()".
	q := query.AST{Clauses: []query.Clause{and(w("sleep")), {Not: true}}}
	require.Equal(t, "sleep", q.String())
}

func TestValidateRejectsHandBuiltTrees(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    query.AST
	}{
		{"Empty", query.AST{}},
		{"OnlyNot", query.AST{Clauses: []query.Clause{not(w("a"))}}},
		{"EmptyClause", query.AST{Clauses: []query.Clause{and(w("a")), {}}}},
		{"EmptyTerm", query.AST{Clauses: []query.Clause{and(w(""))}}},
		{"QuoteInTerm", query.AST{Clauses: []query.Clause{and(w(`a"b`))}}},
		{"MultiWordNotPhrase", query.AST{Clauses: []query.Clause{and(w("a b"))}}},
		{"NothingToSearch", query.AST{Clauses: []query.Clause{and(w("a")), and(ph("*"))}}},
		{"UnsupportedCharBare", query.AST{Clauses: []query.Clause{and(w("a^2"))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, fault.EInvalid, fault.ErrorCode(tt.q.Validate()))
		})
	}
}

// genTerm draws terms from a vocabulary that includes the awkward cases:
// operators, leading hyphens, syntax characters, unicode and spaces.
func genTerm() *rapid.Generator[query.Term] {
	return rapid.Custom(func(t *rapid.T) query.Term {
		text := rapid.OneOf(
			rapid.SampledFrom([]string{"sepsis", "covid-19", "OR", "AND", "NOT", "-x", "a(b)", "title:x", "child*", "Ärzte", "机器", "heart attack", "x--y", "ANDNOT", `'`, "&", "\\"}),
			rapid.StringMatching(`[a-zA-Z0-9\-:*()'\\ ]{1,12}`),
			rapid.String(),
		).Draw(t, "text")
		term := query.NewTerm(text, rapid.Bool().Draw(t, "phrase"))
		if term.Text == "" {
			term = query.NewTerm("fallback", false)
		}
		return term
	})
}

func genAST() *rapid.Generator[query.AST] {
	return rapid.Custom(func(t *rapid.T) query.AST {
		n := rapid.IntRange(1, 6).Draw(t, "clauses")
		var q query.AST
		for i := 0; i < n; i++ {
			c := query.Clause{Not: i > 0 && rapid.Bool().Draw(t, "not")}
			c.Any = rapid.SliceOfN(genTerm(), 1, 4).Draw(t, "any")
			q.Clauses = append(q.Clauses, c)
		}
		return q
	})
}

func TestRoundTripProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := genAST().Draw(t, "q")
		require.NoError(t, q.Validate())
		back, err := query.Parse(q.String())
		require.NoError(t, err, "canonical text %q", q.String())
		require.Equal(t, q, back)
		require.Equal(t, q.String(), back.String())
	})
}

// Whatever text parses, its canonical form parses to the same tree: the
// checkpoint can show String() and accept the edit back without drift.
func TestCanonicalIsAFixedPointProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := rapid.StringMatching(`([a-z]{1,5}|"[a-z ]{0,6}"|\(|\)| OR | AND | NOT |-| ){1,12}`).Draw(t, "in")
		q, err := query.Parse(in)
		if err != nil {
			require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
			return
		}
		back, err := query.Parse(q.String())
		require.NoError(t, err)
		require.Equal(t, q, back)
	})
}
