package handlers

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// TriggerStore is what the trigger routes and pages read: a webhook
// trigger's token, triggers' kept state and their recent firings.
type TriggerStore interface {
	StoredTriggerToken(ctx context.Context, workflow, name string) (string, error)
	TriggerStates(ctx context.Context, workflow string) (map[string]store.TriggerState, error)
	Firings(ctx context.Context, workflow string, limit int) ([]engine.Firing, error)
}

// TriggerBodyLimit caps an inbound trigger's JSON body: it carries a
// run's params, which are small.
const TriggerBodyLimit = "64K"

// Triggers answers inbound webhook triggers.
type Triggers struct {
	engine *engine.Engine
	store  TriggerStore
}

// Fire handles POST /api/triggers/:workflow/:name: with the trigger's
// token as `Authorization: Bearer <token>`, it starts a run with the
// body's JSON object as params → 201 {id, url, status}. A missing or
// wrong token is 401 and neither starts nor records anything (the refusal
// is logged as a rejected request); params the workflow refuses are 400
// with error.fields, recorded as a firing that started nothing. The
// route is exempt from the CSRF check: the token authenticates it.
func (h *Triggers) Fire(c echo.Context) error {
	ctx := c.Request().Context()
	workflow, name := c.Param("workflow"), c.Param("name")
	if _, ok := h.engine.WebhookTrigger(workflow, name); !ok {
		return fault.Errorf(fault.ENotFound, "workflow %q has no webhook trigger %q", workflow, name)
	}
	want, err := h.store.StoredTriggerToken(ctx, workflow, name)
	if err != nil && fault.ErrorCode(err) != fault.ENotFound {
		return err
	}
	got, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
	if !ok || want == "" || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) != 1 {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="quarry trigger"`)
		return echo.NewHTTPError(http.StatusUnauthorized, "missing or wrong trigger token: send Authorization: Bearer <token> (quarry workflow trigger-token prints it)")
	}
	input := map[string]any{}
	dec := json.NewDecoder(c.Request().Body)
	if err := dec.Decode(&input); err != nil && !errors.Is(err, io.EOF) {
		if tooLarge(err) {
			return err
		}
		return badRequest(fault.Errorf(fault.EInvalid, "the body must be a JSON object of the run's params: %v", err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest(fault.Errorf(fault.EInvalid, "the body must hold one JSON object, with nothing after it"))
	}
	run, err := h.engine.Fire(ctx, workflow, name, input)
	if fault.ErrorCode(err) == fault.EInvalid {
		return badRequest(err)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, RunCreated{ID: run.ID, URL: "/runs/" + run.ID, Status: string(run.Status)})
}

// tooLarge reports whether err is the body limit's refusal.
func tooLarge(err error) bool {
	var he *echo.HTTPError
	return errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge
}
