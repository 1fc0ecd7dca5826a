package crossref_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/crossref"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(base string, hc *httpclient.Client) (sources.Source, error) {
	return crossref.New(crossref.Options{BaseURL: base, Contact: "ada@example.org", HTTP: hc})
}

func TestStripMarkup(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"<jats:p>One <jats:bold>two</jats:bold>.</jats:p>", "One two."},
		{"H<sub>2</sub>O &lt; 5 &#x3b1;", "H2O < 5 α"},
		{"  line\n  break  ", "line break"},
		{`<jats:sec><jats:title>Methods</jats:title><jats:p>A</jats:p></jats:sec><jats:sec><jats:p>B <jats:italic toggle="yes">in vivo</jats:italic></jats:p></jats:sec>`, "Methods A B in vivo"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, crossref.StripMarkup(tt.in))
		})
	}
}

func TestValidationFailure(t *testing.T) {
	t.Parallel()
	src := sourcetest.StartFunc(t, newSource, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"failed","message-type":"validation-failure","message":[{"type":"filter-not-available","value":"bogus","message":"Filter bogus specified but there is no such filter for this route."}]}`))
	})
	_, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "no such filter")
}

func TestUnexpectedStatus(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{"/works": `{"status":"failed","message-type":"exception","message":{}}`}, "application/json")
	_, err := src.Search(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 5})
	require.ErrorContains(t, err, "unexpected response")
}

// TestNextPage checks a next page ("Show more") is asked from Crossref
// with offset (and rows) as its works route documents, the first page
// without one, and the total is still total-results.
func TestNextPage(t *testing.T) {
	t.Parallel()
	src, srv := sourcetest.Start(t, newSource, sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/works.json")}, "application/json")
	c := src.(sources.Counter)
	_, err := c.SearchCounted(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 20})
	require.NoError(t, err)
	page, err := c.SearchCounted(context.Background(), sources.SourceRequest{Query: "x", MaxResults: 20, Offset: 20})
	require.NoError(t, err)
	reqs := srv.Requests()
	_, has := reqs[0].URL.Query()["offset"]
	require.False(t, has)
	require.Equal(t, "20", reqs[1].URL.Query().Get("offset"))
	require.Equal(t, "20", reqs[1].URL.Query().Get("rows"))
	require.Equal(t, 48213, page.Total)
}

// TestRecordedResponse decodes a response Crossref really sent, as
// recorded in habanero's test cassettes (testdata/recorded/habanero):
// a change in the documented shape that our fixtures miss shows here.
func TestRecordedResponse(t *testing.T) {
	t.Parallel()
	src, _ := sourcetest.Start(t, newSource, sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/recorded/habanero/works_query_ecology.json")}, "application/json")
	page, err := src.(sources.Counter).SearchCounted(context.Background(), sources.SourceRequest{Query: "ecology", MaxResults: 2})
	require.NoError(t, err)
	require.Equal(t, 586628, page.Total, "total-results")
	require.Len(t, page.Papers, 2)
	require.Equal(t, "Communicating Ecology", page.Papers[0].Title)
	require.Equal(t, "10.1093/obo/9780199830060-0238", page.Papers[0].DOI)
	require.Equal(t, 2022, page.Papers[0].Year)
	require.Equal(t, "Chemical Ecology", page.Papers[1].Title)
	require.Equal(t, 2012, page.Papers[1].Year)
}
