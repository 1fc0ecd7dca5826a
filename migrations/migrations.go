// Package migrations embeds Quarry's numbered SQL migrations so the binary
// carries its schema; internal/store applies them with goose.
package migrations

import "embed"

// FS holds the migration files, named NNNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
