package pgtest

import "syscall"

// setParentDeathSignal has the kernel SIGKILL the child when the test
// binary dies (a timeout panic, kill -9), so no postmaster outlives it;
// its backends notice the postmaster's death and exit too. The kernel
// ties this to the forking OS thread, which the Go runtime keeps for the
// life of the process unless a goroutine locked to it exits; Start does
// not lock threads.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
