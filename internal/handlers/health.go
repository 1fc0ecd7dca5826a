package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/internal/store"
)

// ReadyChecker reports the checks /readyz answers from; *store.Store
// implements it.
type ReadyChecker interface {
	Ready(ctx context.Context) []store.Check
}

// ReadyTimeout bounds the readiness checks, so a stuck database makes the
// probe fail rather than hang past the prober's own timeout.
const ReadyTimeout = 3 * time.Second

// Readiness is the JSON body of /readyz: whether the app is ready, the
// names of the checks that failed, and each check's result ("ok" or why
// it failed).
type Readiness struct {
	Ready  bool              `json:"ready"`
	Failed []string          `json:"failed"`
	Checks map[string]string `json:"checks"`
}

// Ready serves /readyz.
type Ready struct {
	checker ReadyChecker
}

// Show handles GET and HEAD /readyz: 200 when every check passes (the
// database file can be read, its schema is current, the job workers run),
// else 503; the body names each check's result either way. A load balancer
// sends traffic only to a ready instance; /healthz says only that the
// process is alive.
func (h *Ready) Show(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), ReadyTimeout)
	defer cancel()
	body := Readiness{Ready: true, Failed: []string{}, Checks: map[string]string{}}
	for _, ch := range h.checker.Ready(ctx) {
		if ch.Err != nil {
			body.Ready = false
			body.Failed = append(body.Failed, ch.Name)
			body.Checks[ch.Name] = ch.Err.Error()
			continue
		}
		body.Checks[ch.Name] = "ok"
	}
	status := http.StatusOK
	if !body.Ready {
		status = http.StatusServiceUnavailable
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(status, body)
}
