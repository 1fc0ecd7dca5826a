package main

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/app"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// backupSettings are the settings backup and restore read besides --db;
// QUARRY_DATABASE_URL, so that on PostgreSQL both refuse rather than act
// on a SQLite file the server does not use.
var backupSettings = []string{"QUARRY_DB", "QUARRY_DATABASE_URL", "QUARRY_DB_BUSY_TIMEOUT", "QUARRY_BACKUP_DIR", "QUARRY_BACKUP_KEEP", "QUARRY_LOG_FORMAT", "QUARRY_LOG_LEVEL"}

// backupCmd implements `quarry backup`: a consistent copy of the live
// database (VACUUM INTO; a running server may keep writing), recorded in
// it, with retention applied.
func (c *cli) backupCmd(ctx context.Context, args []string) (err error) {
	fs := newFlagSet("backup", "quarry backup [--db PATH]",
		"Copies the database, consistently even while the server runs, into the backup\n"+
			"directory (QUARRY_BACKUP_DIR, default: backups beside the database), records\n"+
			"it and deletes the backups past the newest QUARRY_BACKUP_KEEP. Prints the\n"+
			"copy's path and size.")
	flags := app.Flags{}
	flags.Bind(fs.FlagSet, "QUARRY_DB")
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fs.misuse("unexpected arguments %q", rest)
	}
	cfg, err := app.Load(flags, c.getenv, backupSettings...)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DSN(), cfg.StoreOptions(app.NewLogger(cfg, c.stderr)))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	b, err := st.Backup(ctx, store.BackupManual, "")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "backed up %s to %s (%d bytes, schema version %d)\n", cfg.DB, b.Path, b.Size, b.FromVersion)
	return err
}

// restoreCmd implements `quarry restore FILE`.
func (c *cli) restoreCmd(ctx context.Context, args []string) error {
	fs := newFlagSet("restore", "quarry restore [--db PATH] FILE",
		"Replaces the database with the backup FILE. FILE must pass SQLite's integrity\n"+
			"check and be a Quarry database, else nothing is touched (exit status 1). The\n"+
			"database it replaces is backed up first and kept; the restored one is migrated\n"+
			"if it is older, and checked again. A database another process has open (a\n"+
			"running server, an import) is refused: stop the server first.")
	flags := app.Flags{}
	flags.Bind(fs.FlagSet, "QUARRY_DB")
	files, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fs.misuse("want one backup file, got %d", len(files))
	}
	cfg, err := app.Load(flags, c.getenv, backupSettings...)
	if err != nil {
		return err
	}
	if cfg.DatabaseURL != "" {
		return fault.Errorf(fault.EInvalid, "Quarry restores SQLite databases only: restore a PostgreSQL database with pg_restore")
	}
	r, err := store.Restore(ctx, cfg.DB, files[0], cfg.StoreOptions(app.NewLogger(cfg, c.stderr)))
	if err != nil {
		return err
	}
	if r.Replaced.Path != "" {
		_, err = fmt.Fprintf(c.stdout, "restored %s from %s (schema version %d); the replaced database is kept as %s\n", cfg.DB, files[0], r.Version, r.Replaced.Path)
	} else {
		_, err = fmt.Fprintf(c.stdout, "restored %s from %s (schema version %d)\n", cfg.DB, files[0], r.Version)
	}
	return err
}
