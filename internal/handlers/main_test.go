package handlers_test

import (
	"context"
	"os"
	"testing"

	"quarry/internal/app"
	"quarry/internal/pgtest"
	"quarry/internal/store/storetest"
)

// pg is the test binary's PostgreSQL server, started only when the tests
// run on PostgreSQL (QUARRY_TEST_STORE=postgres, storetest).
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// newApp is app.New for the tests: on PostgreSQL the server runs on a
// database standing for cfg.DB (storetest.DatabaseURL), so a test that
// starts a second server on the same cfg (a restart) reopens it.
func newApp(t testing.TB, ctx context.Context, cfg app.Config, opts ...app.Option) (*app.App, error) {
	t.Helper()
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = storetest.DatabaseURL(t, &pg, cfg.DB)
	}
	return app.New(ctx, cfg, opts...)
}
