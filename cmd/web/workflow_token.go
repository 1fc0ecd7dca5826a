package main

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/app"
	"quarry/internal/fault"
	"quarry/internal/store"
)

// workflowTriggerToken implements `quarry workflow trigger-token
// WORKFLOW NAME [--rotate]`: it prints the token a webhook trigger is
// called with, or replaces it (the old one stops working at once, a
// running server included, which reads it on every call).
func (c *cli) workflowTriggerToken(ctx context.Context, args []string) (err error) {
	fs := newFlagSet("workflow trigger-token", "quarry workflow trigger-token [--db PATH] [--rotate] WORKFLOW NAME",
		"Prints the secret token of the webhook trigger NAME of WORKFLOW, which callers\n"+
			"send as Authorization: Bearer <token> to POST /api/triggers/WORKFLOW/NAME.\n"+
			"The server makes it the first time it starts with the trigger. --rotate\n"+
			"replaces it and prints the new one.")
	flags := app.Flags{}
	flags.Bind(fs.FlagSet, "QUARRY_DB")
	rotate := fs.Bool("rotate", false, "replace the token and print the new one")
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return fs.misuse("want WORKFLOW and NAME, got %d argument(s)", len(rest))
	}
	workflow, name := rest[0], rest[1]
	cfg, err := app.Load(flags, c.getenv, "QUARRY_DB", "QUARRY_DATABASE_URL", "QUARRY_DB_BUSY_TIMEOUT", "QUARRY_LOG_FORMAT", "QUARRY_LOG_LEVEL")
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DSN(), cfg.StoreOptions(app.NewLogger(cfg, c.stderr)))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	tok, err := st.StoredTriggerToken(ctx, workflow, name)
	if fault.ErrorCode(err) == fault.ENotFound {
		where := cfg.DB
		if cfg.DatabaseURL != "" {
			where = "the PostgreSQL database" // not the URL, which may hold a password
		}
		return fault.Errorf(fault.ENotFound, "workflow %s has no webhook trigger %s in %s: the server makes its token when it first starts with the trigger", workflow, name, where)
	}
	if err != nil {
		return err
	}
	if *rotate {
		if tok, err = app.NewTriggerToken(); err != nil {
			return err
		}
		if err := st.RotateTriggerToken(ctx, workflow, name, tok); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintln(c.stdout, tok)
	return err
}
