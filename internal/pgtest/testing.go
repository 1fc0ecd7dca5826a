package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Shared is one server for a whole test binary, started by the first test
// that asks for it (so `go test -run X` that matches no PostgreSQL test
// starts nothing) and stopped by Run after the last. The test package owns
// it, as a variable next to its TestMain:
//
//	var pg pgtest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := pg.NewDatabase(t) // a fresh database for this test
//		...
//	}
type Shared struct {
	Options Options // read once, at the first use

	once sync.Once
	srv  *Server
	err  error
}

// Server starts the shared server on first use and returns it; a test
// that cannot have it ends through Fail (skipped or failed).
func (s *Shared) Server(t testing.TB) *Server {
	t.Helper()
	s.once.Do(func() { s.srv, s.err = Start(context.Background(), s.Options) })
	if s.err != nil {
		Fail(t, s.err)
	}
	return s.srv
}

// NewDatabase returns the URL of a new empty database on the shared
// server, named after the test.
func (s *Shared) NewDatabase(t testing.TB) string {
	t.Helper()
	url, err := s.Server(t).NewDatabase(t.Context(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Run runs the tests, then stops the server if one was started, and
// returns the exit code for os.Exit; a failed Stop fails the run.
func (s *Shared) Run(m *testing.M) int {
	code := m.Run()
	if s.srv != nil {
		if err := s.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// New starts a server of the test's own, stopped when the test ends; a
// test that cannot have one ends through Fail.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	srv, err := Start(t.Context(), opts)
	if err != nil {
		Fail(t, err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

// Fail ends a test that could not get a server: it skips when PostgreSQL
// is not installed, so a laptop without it can still run the rest, but
// fails under CI (CI non-empty) or QUARRY_REQUIRE_POSTGRES=1, where a
// skipped database suite would pass unnoticed. Any other error fails.
func Fail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") == "" && os.Getenv("QUARRY_REQUIRE_POSTGRES") != "1" {
		t.Skip(err)
	}
	t.Fatal(err)
}
