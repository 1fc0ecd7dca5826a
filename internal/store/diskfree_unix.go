//go:build linux || darwin

package store

import "syscall"

// diskFree is the bytes an unprivileged writer may still use on the file
// system holding path, or -1 if it cannot be told.
func diskFree(path string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
