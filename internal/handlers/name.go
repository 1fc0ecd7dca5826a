package handlers

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"quarry/internal/views"
)

// Names handles the display-name form.
type Names struct {
	people *people
}

// Show handles GET /name: the first-visit form asking for a display name.
func (h *Names) Show(c echo.Context) error {
	return render(c, http.StatusOK, views.NamePage(views.NameData{
		Page: h.people.page(c), Name: h.people.name(c), Next: safeNext(c.QueryParam("next")),
	}))
}

// Save handles POST /name: it stores the name in the session and goes on
// to where the person was going.
func (h *Names) Save(c echo.Context) error {
	name := strings.TrimSpace(c.FormValue("name"))
	next := safeNext(c.FormValue("next"))
	if name == "" || utf8.RuneCountInString(name) > 80 {
		return render(c, http.StatusUnprocessableEntity, views.NamePage(views.NameData{
			Page: h.people.page(c), Name: name, Next: next, Error: "Give a name of 1 to 80 characters.",
		}))
	}
	s := h.people.session(c)
	s.Values[keyName] = name
	if err := h.people.save(c, s); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, next)
}
