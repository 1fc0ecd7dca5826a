package crossref_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/crossref"
	"quarry/internal/skills/sources/httpclient"
	"quarry/internal/skills/sources/sourcetest"
)

func newSource(base string, hc *httpclient.Client) (sources.Source, error) {
	return crossref.New(crossref.Options{BaseURL: base, Contact: "ada@example.org", HTTP: hc})
}

func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Conformance(t, newSource, sourcetest.Fixture{
		OK:      sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/works.json")},
		Request: sources.SourceRequest{Query: "sleep memory consolidation", YearRange: research.YearRange{From: 2015, To: 2021}, MaxResults: 25},
		Want: []research.RawPaper{
			{
				Title:    "Sleep spindles and memory reprocessing: a Größenordnung of évidence",
				Authors:  []string{"Søren Ødegård", "María José García-López", "李"},
				Year:     2019,
				Venue:    "Nature Neuroscience",
				Volume:   "22",
				Issue:    "10",
				Pages:    "1598-1610",
				Abstract: "Sleep spindles support memory consolidation. We show that CO2 levels & spindle density (n = 42) predict recall.",
				DOI:      "10.1038/s41593-019-0467-3",
				URL:      "https://doi.org/10.1038/s41593-019-0467-3",
				Rank:     1,
			},
			{
				Title:   "0001 Targeted Memory Reactivation During Slow-wave Sleep",
				Authors: []string{"The TMR Consortium"},
				Year:    2020,
				Venue:   "SLEEP",
				Volume:  "43",
				Issue:   "Supplement_1",
				Pages:   "A1-A1",
				DOI:     "10.1093/sleep/zsaa056.001",
				URL:     "https://doi.org/10.1093/sleep/zsaa056.001",
				Rank:    2,
			},
			{
				Title: "Memory & sleep in the wild",
				Year:  2021,
				DOI:   "10.1145/3442188.3445922",
				URL:   "https://doi.org/10.1145/3442188.3445922",
				Rank:  3,
			},
		},
		Sent: func(t *testing.T, reqs []*http.Request) {
			r := reqs[0]
			q := r.URL.Query()
			require.Equal(t, "/works", r.URL.Path)
			require.Equal(t, "sleep memory consolidation", q.Get("query.bibliographic"))
			require.Equal(t, "25", q.Get("rows"))
			require.Equal(t, "from-pub-date:2015-01-01,until-pub-date:2021-12-31", q.Get("filter"))
			require.Equal(t, "ada@example.org", q.Get("mailto"))
			require.Contains(t, q.Get("select"), "abstract")
		},
		Empty:       sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/empty.json")},
		Malformed:   sourcetest.Bodies{"/works": sourcetest.ReadFile(t, "testdata/malformed.json")},
		ContentType: "application/json",
	})
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
