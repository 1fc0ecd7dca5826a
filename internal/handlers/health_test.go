package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/handlers"
	"quarry/internal/store"
)

// checks is a ReadyChecker answering fixed results.
type checks []store.Check

func (c checks) Ready(context.Context) []store.Check { return c }

func TestHealthzAnswersHead(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rec := b.do(t, http.MethodHead, "/healthz", nil)
	require.Equal(t, http.StatusOK, rec.Code) // net/http drops a HEAD answer's body
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	ok := store.Check{Name: "database"}
	tests := []struct {
		name       string
		checks     checks
		wantStatus int
		want       handlers.Readiness
	}{
		{"Ready", checks{ok, {Name: "workers"}}, http.StatusOK,
			handlers.Readiness{Ready: true, Failed: []string{}, Checks: map[string]string{"database": "ok", "workers": "ok"}}},
		{"WorkersStopped", checks{ok, {Name: "workers", Err: errors.New("stopped")}}, http.StatusServiceUnavailable,
			handlers.Readiness{Failed: []string{"workers"}, Checks: map[string]string{"database": "ok", "workers": "stopped"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := bundle{e: handlers.New(handlers.Deps{Ready: tt.checks})}
			rec := b.do(t, http.MethodGet, "/readyz", nil)
			require.Equal(t, tt.wantStatus, rec.Code)
			require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
			var got handlers.Readiness
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
			require.Equal(t, tt.want, got)

			head := b.do(t, http.MethodHead, "/readyz", nil)
			require.Equal(t, tt.wantStatus, head.Code)
		})
	}
}
