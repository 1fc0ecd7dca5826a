package handlers

import (
	"github.com/labstack/echo/v4"
)

// removeMultipartFiles deletes the temporary files a multipart form was
// spooled to (every part over 32 MB goes to a multipart-* file in the
// temporary directory) when the request ends, however it ends: accepted,
// refused by the CSRF check or a limit, failed or panicking. net/http
// removes them only for the request it passed in, and middleware that
// sets a request with a new context (the timeout) makes the parse happen
// on a copy it never sees, so without this each such upload left its
// size on disk.
func removeMultipartFiles(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		defer func() {
			if f := c.Request().MultipartForm; f != nil {
				_ = f.RemoveAll()
			}
		}()
		return next(c)
	}
}
