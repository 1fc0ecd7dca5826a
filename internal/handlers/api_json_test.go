package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/handlers"
)

// TestAPIJSONRefusesTrailingData: a JSON body is one value; anything after
// it (text, a second object) is refused with 422 invalid, not ignored.
func TestAPIJSONRefusesTrailingData(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	post := func(t *testing.T, path, body string) (int, handlers.ErrorBody) {
		t.Helper()
		res, err := w.client.Post(w.srv.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer res.Body.Close()
		var eb handlers.ErrorBody
		if res.StatusCode >= 400 {
			require.NoError(t, json.NewDecoder(res.Body).Decode(&eb))
		}
		return res.StatusCode, eb
	}
	run := `{"question":"sleep and memory consolidation"}`
	for _, tt := range []struct{ name, path, body string }{
		{"Text", "/api/runs", run + ` xyz`},
		{"TwoObjects", "/api/runs", run + run},
		{"TwoObjectsOnLines", "/api/runs", run + "\n" + run + "\n"},
		{"Array", "/api/runs", run + `[]`},
		{"DecisionText", "/api/runs/r1/decisions", `{"checkpoint_id":"cp1","action":"approve"} xyz`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, eb := post(t, tt.path, tt.body)
			require.Equal(t, http.StatusUnprocessableEntity, status)
			require.Equal(t, fault.EInvalid, eb.Error.Code)
			require.Contains(t, eb.Error.Message, "one JSON value")
		})
	}
	t.Run("TrailingSpaceIsFine", func(t *testing.T) {
		t.Parallel()
		status, _ := post(t, "/api/runs", run+" \r\n\t")
		require.Equal(t, http.StatusCreated, status)
	})
}
