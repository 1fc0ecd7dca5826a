// Package pgtest starts throwaway PostgreSQL servers for tests, from the
// binaries Debian's postgresql package installs (scripts/setup-postgres.sh
// installs them): initdb into a temporary directory, a postmaster on a Unix
// socket in that directory, one fresh database per test. Nothing is
// downloaded at run time. Only tests import it.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	defaultStartTimeout = 30 * time.Second
	stopTimeout         = 10 * time.Second
	// socketPort names the Unix socket (.s.PGSQL.<port>) when the server
	// has no TCP port; each server has its own socket directory, so every
	// server can use the same number.
	socketPort = 5432
)

// Options tune Start; the zero value is a socket-only server.
type Options struct {
	// BinDir holds initdb and postgres. Empty means QUARRY_PG_BIN, else
	// the newest /usr/lib/postgresql/<major>/bin.
	BinDir string
	// TCP also listens on a free port on 127.0.0.1 (TCPURL), for clients
	// that cannot use a Unix socket.
	TCP bool
	// StartTimeout bounds initdb plus startup; 0 means 30 s.
	StartTimeout time.Duration
	// RunAs is the OS user the server runs as when the tests run as root,
	// since initdb and postgres refuse root; empty means "nobody".
	RunAs string
	// Settings are extra server settings (postgres -c name=value), applied
	// after the throwaway defaults so they can override them.
	Settings map[string]string
}

// throwawaySettings trade durability for speed: a crash loses the
// server, which a test throws away anyway. Dynamic shared memory lives in
// the data directory (mmap) rather than /dev/shm, so a server killed
// with the test binary leaves nothing behind outside its directory.
var throwawaySettings = [][2]string{
	{"fsync", "off"},
	{"synchronous_commit", "off"},
	{"full_page_writes", "off"},
	{"autovacuum", "off"},
	{"max_connections", "200"},
	{"dynamic_shared_memory_type", "mmap"},
}

// Server is one running throwaway PostgreSQL. Stop it when done.
type Server struct {
	root string // temporary directory: data/, the socket, postgres.log
	port int
	tcp  bool
	cmd  *exec.Cmd

	exited  chan struct{} // closed when the postmaster has exited
	dbs     atomic.Int64  // numbers NewDatabase's names
	stop    sync.Once
	stopErr error
}

// Start creates a cluster in a new temporary directory and starts a
// postmaster on it, returning once it accepts connections. It fails,
// never hangs, when the server is not ready within Options.StartTimeout.
// A missing installation is reported as ErrNoPostgres.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := binDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	cred, err := credential(opts.RunAs)
	if err != nil {
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	root, err := os.MkdirTemp("", "quarry-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{root: root, port: socketPort, tcp: opts.TCP, exited: make(chan struct{})}
	if err := s.start(ctx, bin, cred, opts); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string, cred *syscall.Credential, opts Options) error {
	if cred != nil {
		if err := os.Chown(s.root, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: handing %s to the server's user: %w", s.root, err)
		}
	}
	data := filepath.Join(s.root, "data")

	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = s.root
	initdb.Env = childEnv()
	initdb.SysProcAttr = sysProcAttr(cred)
	initdb.Cancel = func() error { return killGroup(initdb.Process.Pid) } // initdb's own postgres --boot too
	initdb.WaitDelay = time.Second
	if out, err := initdb.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, tail(out))
	}

	listen := ""
	if s.tcp {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port, listen = port, "127.0.0.1"
	}
	args := []string{"-D", data, "-k", s.root, "-p", strconv.Itoa(s.port), "-c", "listen_addresses=" + listen}
	for _, kv := range throwawaySettings {
		args = append(args, "-c", kv[0]+"="+kv[1])
	}
	for k, v := range opts.Settings {
		args = append(args, "-c", k+"="+v)
	}
	logf, err := os.Create(s.logPath())
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.Dir = s.root
	s.cmd.Env = childEnv()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = sysProcAttr(cred)
	err = s.cmd.Start()
	logf.Close() // the postmaster holds its own copy
	if err != nil {
		s.cmd = nil
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	return s.waitReady(ctx)
}

// waitReady polls until a connection succeeds, the postmaster exits or
// ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(s.URL())
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	cfg.ConnectTimeout = time.Second
	for {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited during startup: %v\n%s", s.cmd.ProcessState, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w (last: %v)\n%s", context.Cause(ctx), err, s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the postgres database's URL over the Unix socket, for pgx.
func (s *Server) URL() string { return s.DatabaseURL("postgres") }

// DatabaseURL is database name's URL over the Unix socket.
func (s *Server) DatabaseURL(name string) string {
	q := url.Values{"host": {s.root}, "port": {strconv.Itoa(s.port)}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + name, RawQuery: q.Encode()}).String()
}

// TCPURL is the postgres database's URL over 127.0.0.1, or "" when the
// server was started without Options.TCP.
func (s *Server) TCPURL() string {
	if !s.tcp {
		return ""
	}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}).String()
}

// Dir is the server's temporary directory (data, socket and log); Stop
// removes it.
func (s *Server) Dir() string { return s.root }

// NewDatabase creates an empty database whose name starts with prefix and
// is unique on this server, and returns its URL: one per test keeps tests
// isolated on a shared server.
func (s *Server) NewDatabase(ctx context.Context, prefix string) (string, error) {
	name := fmt.Sprintf("%s_%d", dbName(prefix), s.dbs.Add(1))
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		return "", fmt.Errorf("pgtest: connecting to create %s: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: creating %s: %w", name, err)
	}
	return s.DatabaseURL(name), nil
}

// Stop shuts the server down at once (no checkpoint: the data is thrown
// away) and removes its directory. It may be called more than once.
func (s *Server) Stop() error {
	s.stop.Do(func() { s.stopErr = s.shutdown() })
	return s.stopErr
}

func (s *Server) shutdown() error {
	var errs []error
	if s.cmd != nil {
		// SIGQUIT is PostgreSQL's immediate shutdown: the postmaster
		// quits its backends and exits after them. Only if it does not
		// is the whole process group killed; after a clean exit the
		// group id may already belong to someone else.
		_ = quit(s.cmd.Process)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			_ = killGroup(s.cmd.Process.Pid)
			select {
			case <-s.exited:
			case <-time.After(stopTimeout):
				errs = append(errs, fmt.Errorf("pgtest: postgres (pid %d) still running after SIGKILL", s.cmd.Process.Pid))
			}
		}
	}
	if err := os.RemoveAll(s.root); err != nil {
		errs = append(errs, fmt.Errorf("pgtest: %w", err))
	}
	return errors.Join(errs...)
}

func (s *Server) logPath() string { return filepath.Join(s.root, "postgres.log") }

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	return tail(b)
}

// tail keeps the end of a log, where the reason for a failure is.
func tail(b []byte) string {
	const max = 2000
	b = bytes.TrimSpace(b)
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// childEnv is the whole environment of initdb and postgres: fixed, so a
// developer's PGDATA, PGHOST or locale cannot change the cluster.
func childEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
}

// credential is the user to run the server as: nil (this process's user)
// unless we are root, which initdb and postgres refuse.
func credential(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs an unprivileged user for postgres: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: user %s: %w", name, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before postgres binds it; startup then fails with the reason.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// dbName makes prefix a short lower-case identifier (test names carry
// slashes and capitals).
func dbName(prefix string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(prefix) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "db"
	}
	return b.String()
}
