package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// server is one quarry process at a time on a fixed address and database:
// started, killed and started again the way an operator's supervisor would.
// Its standard output and error (the log) go to one file across restarts.
type server struct {
	bin, addr, db, logPath string
	env                    []string
	cmd                    *exec.Cmd
	exited                 chan struct{} // closed when cmd has been waited for
	starts                 int
}

// newServer prepares a server for the database db, logging to logPath,
// searching the fakes. It picks a free loopback port now and keeps it, so
// clients find the server again after a restart.
func newServer(bin, db, logPath string, fk *fakes) (*server, error) {
	return newServerEnv(bin, db, logPath,
		"QUARRY_OPEN_MODE=true", // the chaos client decides through the API by name
		"QUARRY_SOURCES=openalex,crossref",
		"QUARRY_OPENALEX_KEY=chaos-key", // OpenAlex requires a key; the fake takes any
		"QUARRY_OPENALEX_URL="+fk.openalex.URL,
		"QUARRY_CROSSREF_URL="+fk.crossref.URL,
		"QUARRY_CONTACT_EMAIL=chaos@example.org", // Crossref's polite pool: 3 requests at once, not 1
		"QUARRY_STRATEGY_CHECKPOINT=true",
		"QUARRY_LLM_PROVIDER=offline",
		"QUARRY_SOURCE_DEADLINE=20s",
	)
}

// newServerEnv prepares a server for the database db, logging to logPath,
// with the settings env on top of its address and database; nothing else
// of QUARRY_* comes from the caller's environment.
func newServerEnv(bin, db, logPath string, env ...string) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	var all []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUARRY_") { // a developer's own settings must not leak in
			all = append(all, kv)
		}
	}
	all = append(all, "QUARRY_ADDR="+addr, "QUARRY_DB="+db)
	return &server{bin: bin, addr: addr, db: db, logPath: logPath, env: append(all, env...)}, nil
}

func (s *server) url() string { return "http://" + s.addr }

// running reports whether a process is up (it may not be ready yet).
func (s *server) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// start runs `quarry serve` and waits until /readyz answers 200.
func (s *server) start(ctx context.Context) error {
	if err := s.launch(); err != nil {
		return err
	}
	return s.waitReady(ctx, 30*time.Second)
}

// launch runs `quarry serve` without waiting for it.
func (s *server) launch() error {
	s.starts++
	log, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "--- chaos: start %d of the server at %s ---\n", s.starts, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		cmd.Wait()
		log.Close()
		close(exited)
	}(s.exited)
	return nil
}

func (s *server) waitReady(ctx context.Context, limit time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for {
		resp, err := hc.Get(s.url() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited during start-up (%s)", s.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server was not ready within %s", limit)
		}
	}
}

// kill is kill -9: the process gets no chance to finish anything.
func (s *server) kill() {
	if !s.running() {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop asks the server to shut down (SIGTERM) and kills it if it has not
// within ten seconds; an error says it had to be killed.
func (s *server) stop() error {
	if !s.running() {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
		s.kill()
		return errors.New("the server did not stop within 10s of SIGTERM and was killed")
	}
}

// tail is the last n lines of the server's log, indented, leaving out
// the lines of requests answered 2xx: the driver's polling would push
// everything else out.
func (s *server) tail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "    (no log: " + err.Error() + ")\n"
	}
	var lines [][]byte
	for l := range bytes.SplitSeq(bytes.TrimRight(b, "\n"), []byte("\n")) {
		if !bytes.Contains(l, []byte("msg=request ")) || !bytes.Contains(l, []byte(" status=2")) {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var out strings.Builder
	for _, l := range lines {
		out.WriteString("    ")
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.String()
}
