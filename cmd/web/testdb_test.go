package main

import (
	"context"
	"maps"
	"testing"

	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// dbEnv is the environment of a command on the test database db, plus
// more: QUARRY_DB, and on PostgreSQL (QUARRY_TEST_STORE=postgres) the
// QUARRY_DATABASE_URL of the database standing for db (storetest.DSN).
func dbEnv(t testing.TB, db string, more map[string]string) map[string]string {
	t.Helper()
	env := map[string]string{"QUARRY_DB": db}
	if url := storetest.DatabaseURL(t, &pg, db); url != "" {
		env["QUARRY_DATABASE_URL"] = url
	}
	maps.Copy(env, more)
	return env
}

// dbGetenv is dbEnv as run's getenv, for a command given --db db.
func dbGetenv(t testing.TB, db string) func(string) string {
	t.Helper()
	env := dbEnv(t, db, nil)
	return func(k string) string { return env[k] }
}

// openStore opens the test database db, as the commands run on it did.
func openStore(t testing.TB, ctx context.Context, db string) (*store.Store, error) {
	t.Helper()
	return store.Open(ctx, storetest.DSN(t, &pg, db), store.Options{})
}
