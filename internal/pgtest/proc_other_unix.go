//go:build unix && !linux

package pgtest

import "syscall"

// setParentDeathSignal does nothing where the kernel has no parent-death
// signal: Stop, called from TestMain or t.Cleanup, is the only cleanup.
func setParentDeathSignal(*syscall.SysProcAttr) {}
