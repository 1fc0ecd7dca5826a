package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/store"
)

// smallDisk mounts a tmpfs of size MiB at a temporary directory for the
// test and returns it; it skips the test where mounting is not allowed
// (not root, or no CAP_SYS_ADMIN).
func smallDisk(t *testing.T, mib int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", mib), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("skipped: cannot mount a small tmpfs to fill (%v: %s); the size-cap tests cover the same paths", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestImportOnAFullDiskClearsItsStage fills a real (small) disk with a bulk
// import: the import stops at its reserve naming the full disk, its staged
// rows are deleted at once, the write-ahead log gives its space back, and
// the database takes writes. Before, the import ran the disk to its last
// byte, where even the delete of its stage could not be logged: the staged
// rows stayed until a restart a day later, and the disk stayed full.
func TestImportOnAFullDiskClearsItsStage(t *testing.T) {
	store.SkipOnPostgres(t, "a small tmpfs disk under the SQLite file")
	dir := smallDisk(t, 24)
	ctx := context.Background()
	path := filepath.Join(dir, "lib.db")
	st, err := store.OpenForTest(t, ctx, path, store.Options{Synchronous: "NORMAL", ImportReserve: 4 << 20})
	require.NoError(t, err)
	defer st.Close()

	recs := make([]library.Record, 40000)
	for i := range recs {
		recs[i] = paper(fmt.Sprintf("Numbat census %d", i), strings.Repeat(fmt.Sprintf("termite diet %d ", i), 30), 2017, fmt.Sprintf("10.6/n%d", i))
	}
	stats, err := library.Import(ctx, st, stream(recs...), library.ImportOptions{BatchSize: 1000})
	require.Error(t, err, "24 MiB cannot hold the import")
	require.Equal(t, fault.EStorageFull, fault.ErrorCode(err), "%v", err)
	require.Contains(t, fault.ErrorMessage(err), "the disk holding the database is nearly full")

	raw, err := store.RawForTest(t, path, "NORMAL")
	require.NoError(t, err)
	defer raw.Close()
	var staged int
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM import_staging`).Scan(&staged))
	require.Zero(t, staged, "the stage is cleared as the import fails (read %d, outcome %q)", stats.Read, stats.Outcome())
	wal, err := os.Stat(path + "-wal")
	if err == nil {
		require.Zero(t, wal.Size(), "the write-ahead log is truncated")
	}
	require.NoError(t, st.Writable(ctx), "the freed pages take the next writes")
}
