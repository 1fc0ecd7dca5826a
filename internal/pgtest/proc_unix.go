//go:build unix

package pgtest

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group, so a terminal's
// Ctrl-C reaches only the test binary, which then stops the server the
// orderly way, and Stop's last resort can kill initdb with the postgres
// it runs; it runs the child as cred when set.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	setParentDeathSignal(a)
	return a
}

// killGroup SIGKILLs the process group led by pid. A postmaster's
// backends are not in it (each calls setsid); they exit on their own
// when they see the postmaster die.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// quit asks the postmaster for an immediate shutdown.
func quit(p *os.Process) error { return p.Signal(syscall.SIGQUIT) }
