package handlers

import (
	"bytes"
	"context"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render writes a templ component as the response. It renders into a buffer
// first so that a failing component becomes a clean error response instead
// of half a page with a 200 status.
func render(c echo.Context, status int, comp templ.Component) error {
	return renderCtx(c.Request().Context(), c, status, comp)
}

// renderCtx is render with an explicit context, for the error handler: it
// runs after the timeout middleware has cancelled the request's context.
func renderCtx(ctx context.Context, c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(ctx, &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// isHTMX reports whether the request was made by htmx for a fragment to
// swap. A boosted form's request (HX-Boosted) is htmx's too, but it wants
// the whole page, as the form would without JavaScript.
func isHTMX(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("HX-Request") == "true" && h.Get("HX-Boosted") != "true"
}
