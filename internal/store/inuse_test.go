//go:build linux || darwin

package store_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/store"
)

// TestHelperHoldsTheDatabase is not a test: run by
// TestRestoreRefusesADatabaseOpenElsewhere as another process, it opens
// the database named by QUARRY_TEST_HOLD_DB, says so, and keeps it open
// until its standard input closes.
func TestHelperHoldsTheDatabase(t *testing.T) {
	store.SkipOnPostgres(t, "file locks on the database file")
	path := os.Getenv("QUARRY_TEST_HOLD_DB")
	if path == "" {
		t.Skip("run as a helper process only")
	}
	st, err := store.OpenForTest(t, context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	os.Stdout.WriteString("open\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// Restore refuses a database another process has open (a running
// server), touching nothing; once that process is gone it restores.
func TestRestoreRefusesADatabaseOpenElsewhere(t *testing.T) {
	store.SkipOnPostgres(t, "file locks on the database file")
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	st, err := store.OpenForTest(t, ctx, db, store.Options{})
	require.NoError(t, err)
	b, err := st.Backup(ctx, store.BackupManual, "")
	require.NoError(t, err)
	require.NoError(t, st.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldsTheDatabase$", "-test.count=1")
	cmd.Env = append(os.Environ(), "QUARRY_TEST_HOLD_DB="+db)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "open\n", line)

	_, err = store.Restore(ctx, db, b.Path, store.Options{})
	require.Equal(t, fault.EConflict, fault.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "open in another process")
	entries, err := os.ReadDir(filepath.Join(dir, "backups"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing touched: no backup of the database it would replace")

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	_, err = store.Restore(ctx, db, b.Path, store.Options{})
	require.NoError(t, err)
}
