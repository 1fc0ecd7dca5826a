// Package migrations embeds Quarry's numbered SQL migrations so the binary
// carries its schema; internal/store applies them with goose.
//
// The top-level files are SQLite's. From 00026 on every migration is a
// pair: NNNNN_x.sql here and postgres/NNNNN_x.sql, the same change in
// PostgreSQL's dialect; postgres/00025_baseline.sql creates, in one step,
// the schema SQLite's 00001..00025 build (docs/postgres-schema.md).
package migrations

import (
	"embed"
	"io/fs"
)

// FS holds the SQLite migration files, named NNNNN_description.sql, and
// nothing else: goose and the store's tests read its top level as the
// migration list, so the PostgreSQL files are embedded apart.
//
//go:embed *.sql
var FS embed.FS

//go:embed postgres/*.sql
var postgresFiles embed.FS

// Postgres returns the PostgreSQL migration files at its top level, the
// layout goose.NewProvider (dialect postgres) reads. fs.Sub fails only for
// an invalid directory name, which "postgres" is not.
func Postgres() (fs.FS, error) {
	return fs.Sub(postgresFiles, "postgres")
}
