package handlers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"quarry/static"
)

// assetCacheControl lets browsers reuse assets for an hour and then
// revalidate cheaply with the ETag; file names are not fingerprinted, so a
// longer lifetime would keep stale CSS after an upgrade.
const assetCacheControl = "public, max-age=3600"

// asset is one embedded file with its precomputed validator.
type asset struct {
	data []byte
	etag string
}

// assets serves the embedded files in package static.
type assets struct {
	files map[string]asset
}

// newAssets reads and hashes the embedded files once, so each request only
// compares ETags instead of re-hashing.
func newAssets() *assets {
	a := &assets{files: map[string]asset{}}
	entries, _ := fs.ReadDir(static.FS, ".") // embed.FS root always exists
	for _, de := range entries {
		if de.IsDir() {
			continue
		}
		data, err := fs.ReadFile(static.FS, de.Name())
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		a.files[de.Name()] = asset{data: data, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return a
}

// Serve handles GET /static/:file. http.ServeContent answers conditional
// requests (If-None-Match → 304) and sets the content type from the name.
func (a *assets) Serve(c echo.Context) error {
	f, ok := a.files[c.Param("file")]
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, assetCacheControl)
	h.Set("ETag", f.etag)
	http.ServeContent(c.Response(), c.Request(), c.Param("file"), time.Time{}, bytes.NewReader(f.data))
	return nil
}
