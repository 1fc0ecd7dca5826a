//go:build linux || darwin

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// shmDMS is the byte of a WAL database's -shm file that SQLite's unix VFS
// keeps a shared lock on for as long as a connection has the database
// open (its "dead man switch", UNIX_SHM_DMS in os_unix.c).
const shmDMS = 128

// openElsewhere reports whether another process has the database at
// dbPath open (a running server, a `quarry import`): SQLite holds a read
// lock on the -shm file's DMS byte while it does, which F_GETLK sees.
// fcntl locks are per process, so this process's own connections are not
// seen, and closing the descriptor would drop them: call it before this
// process opens the database.
func openElsewhere(dbPath string) (bool, error) {
	f, err := os.OpenFile(dbPath+"-shm", os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: is the database open elsewhere: %w", err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: shmDMS, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return false, fmt.Errorf("store: is the database open elsewhere: %w", err)
	}
	return lk.Type != syscall.F_UNLCK, nil
}
