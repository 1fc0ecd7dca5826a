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
