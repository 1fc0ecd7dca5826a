package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// tmpfsSize is the disk-full trial's whole disk: room for a fresh
// database (well under 1 MiB) and its write-ahead log, and quick to fill.
const tmpfsSize = "24m"

// diskFullTrial puts the database on a small tmpfs, starts a run, fills
// the tmpfs mid-search and checks that the server answers POST /api/runs
// with 507, stays up, and, once the filler is deleted, resumes the run and
// completes it with nothing lost or duplicated. It returns the line to
// print and whether it passed; a machine that cannot mount a tmpfs skips
// it (and passes).
func diskFullTrial(ctx context.Context, cfg config, bin, dir string, fk *fakes, stderr io.Writer) (string, bool) {
	if ctx.Err() != nil {
		return "chaos: disk-full trial skipped: no time left", false
	}
	if runtime.GOOS != "linux" {
		return "chaos: disk-full trial skipped: tmpfs needs Linux, this is " + runtime.GOOS, true
	}
	if os.Geteuid() != 0 {
		return "chaos: disk-full trial skipped: mounting a tmpfs needs root", true
	}
	mnt := filepath.Join(dir, "tmpfs")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return "chaos: disk-full trial skipped: " + err.Error(), true
	}
	if out, err := exec.CommandContext(ctx, "mount", "-t", "tmpfs", "-o", "size="+tmpfsSize, "tmpfs", mnt).CombinedOutput(); err != nil {
		return fmt.Sprintf("chaos: disk-full trial skipped: mount -t tmpfs: %v: %s", err, strings.TrimSpace(string(out))), true
	}
	defer unmount(mnt, stderr)
	fmt.Fprintf(stderr, "chaos: disk-full trial: database on a %s tmpfs at %s\n", tmpfsSize, mnt)

	d := &diskFull{dir: dir, mnt: mnt, stderr: stderr}
	t := newTrial(0, cfg, bin, dir, fk, rand.New(rand.NewPCG(cfg.seed, 0)))
	resumed, problems := d.run(ctx, t)
	if len(problems) == 0 {
		return fmt.Sprintf("chaos: disk_full=ok resumed_in=%s", resumed.Round(10*time.Millisecond)), true
	}
	fmt.Fprintf(stderr, "chaos: disk-full trial FAILED:\n")
	for _, p := range problems {
		fmt.Fprintf(stderr, "chaos:   %s\n", p)
	}
	if t.srv != nil {
		fmt.Fprintf(stderr, "chaos:   kept %s; last lines of its server log:\n%s", dir, t.srv.tail(40))
	}
	r := "never"
	if resumed > 0 {
		r = resumed.Round(10 * time.Millisecond).String()
	}
	return fmt.Sprintf("chaos: disk_full=FAIL resumed_in=%s: %s", r, problems[0]), false
}

// diskFull is the disk-full trial's paths.
type diskFull struct {
	dir, mnt string
	stderr   io.Writer
}

// run drives the trial; resumed is how long after the filler was deleted
// the run was seen moving again (0: never).
func (d *diskFull) run(ctx context.Context, t *trial) (resumed time.Duration, problems []string) {
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	srv, err := newServer(t.bin, filepath.Join(d.mnt, "q.db"), filepath.Join(d.dir, "server.log"), t.fk)
	if err != nil {
		fail("%v", err)
		return 0, problems
	}
	t.srv, t.api = srv, newClient(srv.url())
	defer srv.kill()
	if err := srv.start(ctx); err != nil {
		fail("start: %v", err)
		return 0, problems
	}
	searching := make(chan struct{}, 1)
	t.fk.hook(func() {
		select {
		case searching <- struct{}{}:
		default:
		}
	})
	defer t.fk.hook(nil)
	// A run parked at its strategy checkpoint, to be decided while the
	// disk is full: a 202 then must still be recorded (verify checks it).
	parked, _, err := t.api.createRun(ctx, startInput{Question: questions()[2], MaxIterations: maxIterations, StrategyCheckpoint: true, StartedBy: "chaos-disk-full"})
	if err != nil {
		fail("starting the parked run: %v", err)
		return 0, problems
	}
	t.runs = append(t.runs, &trackedRun{id: parked})
	var cp *checkpointJSON
	for wait := time.Now(); cp == nil; {
		if rj, _, err := t.api.getRun(ctx, parked); err == nil {
			cp = rj.Checkpoint
		}
		if cp == nil && (time.Since(wait) > 15*time.Second || !pause(ctx, 20*time.Millisecond)) {
			fail("the parked run did not reach its strategy checkpoint within 15s")
			return 0, problems
		}
	}
	// No strategy checkpoint: this run goes straight to its search.
	id, _, err := t.api.createRun(ctx, startInput{Question: questions()[0], MaxIterations: maxIterations, StartedBy: "chaos-disk-full"})
	if err != nil {
		fail("starting the run: %v", err)
		return 0, problems
	}
	t.runs = append(t.runs, &trackedRun{id: id})
	select {
	case <-searching:
	case <-time.After(15 * time.Second):
		fail("the run did not start searching within 15s")
		return 0, problems
	}

	filler := filepath.Join(d.mnt, "filler")
	n, err := fill(filler)
	if err != nil {
		fail("filling the tmpfs: %v", err)
		return 0, problems
	}
	fmt.Fprintf(d.stderr, "chaos: disk-full trial: the tmpfs is full (filler of %d bytes)\n", n)
	// While the disk is full: a new run must be refused with 507 ...
	newID, status, err := t.api.createRun(ctx, startInput{Question: questions()[1], MaxIterations: maxIterations, StartedBy: "chaos-disk-full"})
	switch {
	case status == http.StatusInsufficientStorage:
	case status == http.StatusCreated:
		fail("POST /api/runs answered 201, not 507, with the disk full")
		t.runs = append(t.runs, &trackedRun{id: newID})
	case status == 0:
		fail("POST /api/runs got no answer with the disk full: %v", err)
	default:
		fail("POST /api/runs answered %d, not 507, with the disk full: %v", status, err)
	}
	// ... a decision must be refused with 507 too, or recorded ...
	dec := decisionInput{CheckpointID: cp.ID, Action: "approve", DecidedBy: "chaos-disk-full"}
	status, body, err := t.api.decide(ctx, parked, dec)
	switch {
	case status == http.StatusInsufficientStorage:
	case status == http.StatusAccepted:
		t.decided[cp.ID] = true
		t.decisions = append(t.decisions, decision{runID: parked, checkpointID: cp.ID, kind: cp.Kind, action: dec.Action,
			decidedBy: dec.DecidedBy, iteration: cp.Iteration})
	case status == 0:
		fail("a decision got no answer with the disk full: %v", err)
	default:
		fail("a decision answered %d, not 507 (or 202), with the disk full: %s", status, strings.TrimSpace(string(body)))
	}
	// ... while the run's search ends and its commit meets the full disk.
	pause(ctx, 1500*time.Millisecond)
	if err := alive(ctx, t); err != nil {
		fail("with the disk full: %v", err)
		return 0, problems
	}
	if err := os.Remove(filler); err != nil {
		fail("deleting the filler: %v", err)
		return 0, problems
	}
	freed := time.Now()

	// Once space is back the run must move on by itself: to its review
	// checkpoint or beyond.
	for resumed == 0 && time.Since(freed) < 30*time.Second && ctx.Err() == nil {
		if rj, _, err := t.api.getRun(ctx, id); err == nil && (rj.Checkpoint != nil || rj.Status != "running") {
			resumed = time.Since(freed)
			break
		}
		pause(ctx, 20*time.Millisecond)
	}
	switch {
	case resumed == 0:
		fail("the run did not move on within 30s of the filler's deletion")
	case resumed > 10*time.Second:
		fail("the run moved on only %s after the filler's deletion (more than 10s)", resumed.Round(10*time.Millisecond))
	}
	if err := alive(ctx, t); err != nil {
		fail("after the filler's deletion: %v", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.cfg.runs = len(t.runs)
	t.drive(dctx)
	cancel()
	if err := srv.stop(); err != nil {
		fail("%v", err)
	}
	srv.kill()
	problems = append(problems, t.problems...)
	v, err := verify(ctx, srv.db, t.runs, t.decisions)
	if err != nil {
		fail("verify: %v", err)
		return resumed, problems
	}
	return resumed, append(problems, v.problems...)
}

// alive checks the server process is up and answers /healthz.
func alive(ctx context.Context, t *trial) error {
	if !t.srv.running() {
		return errors.New("the server exited")
	}
	status, _, err := t.api.do(ctx, http.MethodGet, "/healthz", nil, nil)
	if err != nil {
		return fmt.Errorf("GET /healthz: %v", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET /healthz answered %d", status)
	}
	return nil
}

// fill writes path until the file system says it is full (ENOSPC), in
// smaller and smaller pieces so that not even a page is left.
func fill(path string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for _, size := range []int{1 << 20, 4 << 10, 512, 1} {
		for {
			m, err := f.Write(buf[:size])
			n += int64(m)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// unmount removes the tmpfs, lazily if something still holds it.
func unmount(mnt string, stderr io.Writer) {
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		if out2, err2 := exec.Command("umount", "-l", mnt).CombinedOutput(); err2 != nil {
			fmt.Fprintf(stderr, "chaos: could not unmount %s: %v: %s; %v: %s\n", mnt, err, out, err2, out2)
		}
	}
}
