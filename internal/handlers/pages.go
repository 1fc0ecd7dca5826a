package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"quarry/internal/views"
)

// Pages serves the static-content pages. It has no dependencies yet; it is a
// struct so that the store can be added without changing route wiring.
type Pages struct{}

// Home handles GET /: the landing page with the (not yet active) search form.
func (p *Pages) Home(c echo.Context) error {
	return render(c, http.StatusOK, views.Home())
}
