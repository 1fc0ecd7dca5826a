package pgtest

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// shared is this package's own use of Shared, as another package would
// use it from its TestMain.
var shared Shared

func TestMain(m *testing.M) { os.Exit(shared.Run(m)) }

// query runs a one-value query on the database at url.
func query[T any](t *testing.T, url, sql string, args ...any) T {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var v T
	require.NoError(t, conn.QueryRow(t.Context(), sql, args...).Scan(&v))
	return v
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), sql)
	require.NoError(t, err)
}

// TestServerLifecycle starts a server, gives two databases their own
// tables, and checks that Stop leaves no process and no directory.
func TestServerLifecycle(t *testing.T) {
	t.Parallel()
	srv, err := Start(t.Context(), Options{})
	if err != nil {
		Fail(t, err)
	}
	t.Cleanup(func() { _ = srv.Stop() })

	a, err := srv.NewDatabase(t.Context(), "Test/A")
	require.NoError(t, err)
	b, err := srv.NewDatabase(t.Context(), "Test/A")
	require.NoError(t, err)
	require.NotEqual(t, a, b, "the same prefix twice gives two databases")

	execSQL(t, a, "CREATE TABLE papers (title text); INSERT INTO papers VALUES ('one'), ('two')")
	execSQL(t, b, "CREATE TABLE papers (title text); INSERT INTO papers VALUES ('three')")
	require.Equal(t, int64(2), query[int64](t, a, "SELECT count(*) FROM papers"))
	require.Equal(t, int64(1), query[int64](t, b, "SELECT count(*) FROM papers"))
	require.Equal(t, "test_a_1", query[string](t, a, "SELECT current_database()"))
	require.Equal(t, "UTF8", query[string](t, a, "SHOW server_encoding"))
	require.Equal(t, "off", query[string](t, a, "SHOW fsync"))
	require.Equal(t, "", query[string](t, a, "SHOW listen_addresses"), "socket only")
	require.Empty(t, srv.TCPURL())

	held, err := pgx.Connect(t.Context(), a) // a backend still busy at Stop
	require.NoError(t, err)
	defer held.Close(context.Background())
	var backend int32
	require.NoError(t, held.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&backend))
	pid := srv.cmd.Process.Pid
	dir := srv.Dir()
	require.NoError(t, srv.Stop())
	require.ErrorIs(t, syscall.Kill(int(backend), 0), syscall.ESRCH, "its backends are gone")
	require.NoError(t, srv.Stop(), "Stop is idempotent")
	require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the postmaster is gone")
	_, err = os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "the directory is removed")
}

// TestConcurrentServers starts two servers at once, one also on TCP.
func TestConcurrentServers(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	srvs := make([]*Server, 2)
	errs := make([]error, 2)
	for i := range srvs {
		wg.Go(func() { srvs[i], errs[i] = Start(t.Context(), Options{TCP: i == 1}) })
	}
	wg.Wait()
	for _, s := range srvs {
		if s != nil {
			t.Cleanup(func() { _ = s.Stop() })
		}
	}
	for _, err := range errs {
		if err != nil {
			Fail(t, err)
		}
	}
	require.NotEqual(t, srvs[0].Dir(), srvs[1].Dir())
	require.Equal(t, int64(2), query[int64](t, srvs[0].URL(), "SELECT 1 + 1"))
	require.Equal(t, int64(3), query[int64](t, srvs[1].TCPURL(), "SELECT 1 + 2"))
	require.Equal(t, "127.0.0.1", query[string](t, srvs[1].URL(), "SHOW listen_addresses"))
	require.NotEqual(t, query[int32](t, srvs[0].URL(), "SELECT pg_backend_pid()"), int32(0))
}

// TestShared gives two tests their own databases on one server.
func TestShared(t *testing.T) {
	t.Parallel()
	first := shared.Server(t)
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Same(t, first, shared.Server(t), "one server for the binary")
			url := shared.NewDatabase(t)
			execSQL(t, url, "CREATE TABLE t (v text)")
			execSQL(t, url, "INSERT INTO t VALUES ('"+name+"')")
			require.Equal(t, name, query[string](t, url, "SELECT v FROM t"))
		})
	}
}

// TestMissingBinaries: a directory without PostgreSQL is ErrNoPostgres,
// which Fail turns into a skip or, under CI, a failure.
func TestMissingBinaries(t *testing.T) {
	t.Parallel()
	_, err := Start(t.Context(), Options{BinDir: t.TempDir()})
	require.ErrorIs(t, err, ErrNoPostgres)
	require.Contains(t, err.Error(), "scripts/setup-postgres.sh")
	require.False(t, errors.Is(errors.New("other"), ErrNoPostgres))
}

func TestDBName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "testx_sub_case", dbName("TestX/sub case"))
	require.Equal(t, "db", dbName(""))
	require.Len(t, dbName(string(make([]byte, 100))), 40)
}

// TestStartTimeout: a server not ready in time is an error, not a hang,
// and leaves nothing running.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	if _, err := binDir(""); err != nil {
		Fail(t, err)
	}
	start := time.Now()
	_, err := Start(t.Context(), Options{StartTimeout: 300 * time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)
}
