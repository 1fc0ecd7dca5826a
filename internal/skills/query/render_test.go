package query_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"quarry/internal/fault"
	"quarry/internal/skills/query"
)

func TestRender(t *testing.T) {
	t.Parallel()
	const full = `"machine learning" (sepsis OR "septic shock") covid-19 -mice NOT ("case report" OR rats)`
	tests := []struct {
		name   string
		in     string
		source string
		want   string
	}{
		{"Local", full, query.Local, `("machine learning" AND ("sepsis" OR "septic shock") AND ("covid-19" OR "covid19")) NOT "mice" NOT "case report" NOT "rats"`},
		{"LocalHyphenatedWordAlsoJoined", `pre-training -self-supervised "large-scale models"`, query.Local, `(("pre-training" OR "pretraining") AND "large-scale models") NOT "self-supervised" NOT "selfsupervised"`},
		{"LocalJoinedAlternativeNotRepeated", `(pre-training OR pretraining)`, query.Local, `("pre-training" OR "pretraining")`},
		{"LocalSingle", `sepsis`, query.Local, `"sepsis"`},
		{"LocalSingleWithNot", `sepsis -mice`, query.Local, `"sepsis" NOT "mice"`},
		{"LocalNeutralisesSyntax", `title:x NEAR child* "^start"`, query.Local, `"title:x" AND "NEAR" AND "child*" AND "^start"`},
		{"OpenAlex", full, query.OpenAlex, `"machine learning" AND (sepsis OR "septic shock") AND "covid-19" NOT mice NOT "case report" NOT rats`},
		// Each concept's main term only: a long bag of words finds little there (s2-folks issue 212).
		{"SemanticScholar", full, query.SemanticScholar, "machine learning sepsis covid 19"},
		{"Arxiv", full, query.Arxiv, `all:"machine learning" AND (all:sepsis OR all:"septic shock") AND all:"covid-19" ANDNOT all:mice ANDNOT all:"case report" ANDNOT all:rats`},
		{"ArxivOperatorWordQuoted", `"AND" logic`, query.Arxiv, `all:"AND" AND all:logic`},
		{"Crossref", full, query.Crossref, `machine learning sepsis septic shock covid 19`},
		{"CrossrefDedupsWords", `"heart attack" (attack OR Heart) infarction`, query.Crossref, `heart attack infarction`},
		{"PubMed", full, query.PubMed, `"machine learning"[tiab] AND (sepsis[tiab] OR "septic shock"[tiab]) AND "covid-19"[tiab] NOT mice[tiab] NOT "case report"[tiab] NOT rats[tiab]`},
		{"PubMedStripsFieldTags", `"sepsis[mh]"`, query.PubMed, `"sepsis mh"[tiab]`},
		{"SerpAPIScholar", full, query.SerpAPIScholar, `"machine learning" sepsis OR "septic shock" "covid-19" -mice -"case report" -rats`},
		{"ExactSingleWordStaysQuoted", `"ml" ai`, query.SerpAPIScholar, `"ml" ai`},
		{"UnicodeWordsStayBare", `Ärzte 机器`, query.OpenAlex, `Ärzte AND 机器`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := query.Parse(tt.in)
			require.NoError(t, err)
			got, err := query.Render(tt.source, q)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.want, query.RenderAll(q, []string{tt.source})[tt.source])
		})
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	q, err := query.Parse("sepsis")
	require.NoError(t, err)
	_, err = query.Render("altavista", q)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))

	_, err = query.Render(query.Local, query.AST{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))

	// Nothing searchable is an error, not an empty query, and not a local
	// phrase of no words that matches nothing.
	_, err = query.Parse(`"&&"`)
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	punct := query.AST{Clauses: []query.Clause{{Any: []query.Term{{Text: "&&", Phrase: true}}}}}
	for _, src := range query.Sources() {
		_, err = query.Render(src, punct)
		require.Equal(t, fault.EInvalid, fault.ErrorCode(err), src)
	}
}

func TestRenderAllUnknownSourceGetsCanonical(t *testing.T) {
	t.Parallel()
	q, err := query.Parse(`a (b OR "c d") -e`)
	require.NoError(t, err)
	got := query.RenderAll(q, []string{query.Local, "future_source"})
	require.Len(t, got, 2)
	require.Equal(t, q.String(), got["future_source"])
}

func TestSourcesIsACopy(t *testing.T) {
	t.Parallel()
	s := query.Sources()
	require.Len(t, s, 7)
	s[0] = "changed"
	require.Equal(t, query.Local, query.Sources()[0])
	q := query.Words("x")
	for _, src := range query.Sources() {
		_, err := query.Render(src, q)
		require.NoError(t, err, src)
	}
}

// A hand-built tree may hold a double quote (its fields are exported); the
// local renderer must still produce one FTS5 string literal per term.
func TestLocalDoublesEmbeddedQuotes(t *testing.T) {
	t.Parallel()
	q := query.AST{Clauses: []query.Clause{{Any: []query.Term{{Text: `say "hi" NOT`}}}, {Not: true, Any: []query.Term{{Text: `"`}}}}}
	got := query.RenderAll(q, []string{query.Local})[query.Local]
	require.Equal(t, `"say ""hi"" NOT" NOT """"`, got)
	require.NoError(t, checkFTS5(got))
}

// checkFTS5 checks the shape the local renderer promises: string literals
// (with "" as an escaped quote) separated by AND, OR, NOT and parentheses,
// with every literal closed and every parenthesis matched.
func checkFTS5(s string) error {
	depth := 0
	i := 0
	expectOperand := true
	for i < len(s) {
		switch {
		case s[i] == ' ':
			i++
		case s[i] == '(':
			if !expectOperand {
				return fault.Errorf(fault.EInvalid, "'(' where an operator was expected at %d in %s", i, s)
			}
			depth++
			i++
		case s[i] == ')':
			if expectOperand || depth == 0 {
				return fault.Errorf(fault.EInvalid, "unexpected ')' at %d in %s", i, s)
			}
			depth--
			i++
		case s[i] == '"':
			if !expectOperand {
				return fault.Errorf(fault.EInvalid, "literal where an operator was expected at %d in %s", i, s)
			}
			i++
			for {
				if i >= len(s) {
					return fault.Errorf(fault.EInvalid, "unclosed literal in %s", s)
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			expectOperand = false
		default:
			op := ""
			for _, o := range []string{"AND ", "OR ", "NOT "} {
				if strings.HasPrefix(s[i:], o) {
					op = o
				}
			}
			if op == "" || expectOperand {
				return fault.Errorf(fault.EInvalid, "bare text at %d in %s", i, s)
			}
			i += len(op)
			expectOperand = true
		}
	}
	if depth != 0 || expectOperand {
		return fault.Errorf(fault.EInvalid, "unbalanced or incomplete expression %s", s)
	}
	return nil
}

// checkBalanced is the weaker promise every quoting source keeps: quotes
// come in pairs and parentheses outside quotes match.
func checkBalanced(s string) bool {
	depth, inQuote := 0, false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote = !inQuote
		case inQuote:
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0 && !inQuote
}

func TestRenderShapeProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := genAST().Draw(t, "q")
		all := query.RenderAll(q, query.Sources())
		require.Len(t, all, len(query.Sources()))
		require.NoError(t, checkFTS5(all[query.Local]))
		for src, s := range all {
			require.True(t, checkBalanced(s), "%s: %s", src, s)
		}
	})
}

// TestUnsent: the alternatives Semantic Scholar is not sent, for the
// report to name; every other source is sent them all.
func TestUnsent(t *testing.T) {
	t.Parallel()
	q, err := query.Parse(`"machine learning" AND (sepsis OR "septic shock") AND (covid-19 OR covid19) -mice`)
	require.NoError(t, err)
	var texts []string
	for _, term := range query.Unsent(query.SemanticScholar, q) {
		texts = append(texts, term.Text)
	}
	require.Equal(t, []string{"septic shock", "covid19"}, texts)
	for _, src := range query.Sources() {
		if src != query.SemanticScholar {
			require.Empty(t, query.Unsent(src, q), src)
		}
	}
}

// TestTruncation: child* reaches PubMed as its truncation, every other
// source as the stem (OpenAlex once searched the quoted phrase "child*"),
// and Stripped names it for the report.
func TestTruncation(t *testing.T) {
	t.Parallel()
	q, err := query.Parse(`child* AND asthma`)
	require.NoError(t, err)
	for src, want := range map[string]string{
		query.OpenAlex:       `child AND asthma`,
		query.Arxiv:          `all:child AND all:asthma`,
		query.PubMed:         `child*[tiab] AND asthma[tiab]`,
		query.SerpAPIScholar: `child asthma`,
		query.Crossref:       `child asthma`,
	} {
		got, err := query.Render(src, q)
		require.NoError(t, err)
		require.Equal(t, want, got, src)
	}
	require.Empty(t, query.Stripped(query.PubMed, q))
	require.Equal(t, []query.Term{{Text: "child*"}}, query.Stripped(query.OpenAlex, q))
}
