// Package static embeds the browser assets (vendored htmx, its SSE extension
// and app.css) so the binary is self-contained and needs no asset directory
// at run time. Versions and checksums are recorded in README.md.
package static

import "embed"

// FS holds the assets by file name (e.g. "htmx.min.js"). It is read-only;
// the handlers package serves it under /static/ with cache headers.
//
// Vendored: htmx.org@2.0.11 (dist/htmx.min.js), htmx-ext-sse@2.2.4 (dist/sse.min.js).
//
//go:embed htmx.min.js sse.min.js app.css app.js favicon.svg
var FS embed.FS
