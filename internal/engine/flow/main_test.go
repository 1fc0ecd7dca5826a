package flow_test

import (
	"os"
	"testing"

	"quarry/internal/pgtest"
)

// pg is the test binary's PostgreSQL server, started only when the tests
// run on PostgreSQL (QUARRY_TEST_STORE=postgres, storetest.DSN).
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }
