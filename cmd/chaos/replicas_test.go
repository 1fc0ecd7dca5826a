package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"quarry/internal/pgtest"
)

// replicasBudget bounds the whole scenario after the build: three starts,
// a run through a gate, a kill and River's rescue (its leader may be the
// replica killed: a new one is elected within ~20 s, and the rescuer
// looks every 30 s) take well under a minute; past this the test fails.
const replicasBudget = 2 * time.Minute

// replicasRescueAfter is the replicas' QUARRY_JOB_RESCUE_AFTER: the killed
// replica's job is rescued seconds after the kill instead of 15 minutes.
// It stays above every job of this workflow that a live replica runs
// (each webhook answers at once, but the one the kill interrupts).
const replicasRescueAfter = "3s"

// replicasWorkflow gates, then calls a webhook that the witness holds
// open until the replica calling it is killed; webhooks before and after
// count that every other stage ran once. The replica calling is named in
// a header from its own secrets file, so the test knows whom to kill.
const replicasWorkflow = `apiVersion: quarry/v1
kind: Workflow
metadata: {name: replicas, title: "Three replicas", version: 1}
stages:
  - id: before
    type: webhook
    request: {url: "%[1]s/before", headers: {X-Replica: "{{ secrets.REPLICA }}"}}
  - id: approve
    type: gate
    options:
      - {label: "Go", next: slow}
      - {label: "Stop", next: complete}
  - id: slow
    type: webhook
    request: {url: "%[1]s/slow", headers: {X-Replica: "{{ secrets.REPLICA }}"}}
  - id: after
    type: webhook
    request: {url: "%[1]s/after", headers: {X-Replica: "{{ secrets.REPLICA }}"}}
`

// TestReplicasSurviveAKill runs three `quarry serve` processes on one
// PostgreSQL database. A run started through replica 1 reaches its gate,
// which replica 3's event stream shows live; replica 2 decides; the
// replica that then runs the slow step is killed with SIGKILL mid-call.
// River's rescuer hands the abandoned job to a survivor, which completes
// the run, and nothing ran to commit twice: each other webhook was called
// once, the slow one once more than it was answered, each stage is in the
// run's history once and the gate has one decision.
func TestReplicasSurviveAKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs three servers on PostgreSQL; not in -short")
	}
	pg := pgtest.New(t, pgtest.Options{})
	dbURL, err := pg.NewDatabase(t.Context(), t.Name())
	require.NoError(t, err)
	dir := t.TempDir()
	bin := buildQuarry(t, dir)

	ctx, cancel := context.WithTimeout(t.Context(), replicasBudget)
	defer cancel()
	wit := newWitness()
	hooks := httptest.NewServer(wit)
	t.Cleanup(hooks.Close)
	t.Cleanup(wit.release)

	wfDir := filepath.Join(dir, "workflows")
	require.NoError(t, os.MkdirAll(wfDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wfDir, "replicas.yaml"), fmt.Appendf(nil, replicasWorkflow, hooks.URL), 0o644))

	replicas := make([]*server, 3)
	t.Cleanup(func() {
		for i, r := range replicas {
			if r == nil {
				continue
			}
			if t.Failed() {
				t.Logf("replica %d's log, last lines:\n%s", i+1, r.tail(40))
			}
			if err := r.stop(); err != nil {
				t.Errorf("replica %d: %v", i+1, err)
			}
		}
	})
	began := time.Now()
	// One at a time: the first migrates the empty database, and each
	// picks its free port while the ones before hold theirs.
	for i := range replicas {
		name := fmt.Sprintf("r%d", i+1)
		replicas[i] = newReplica(t, bin, filepath.Join(dir, name), name, []string{
			"QUARRY_DATABASE_URL=" + dbURL,
			"QUARRY_WORKFLOWS_DIR=" + wfDir,
			"QUARRY_WEBHOOK_HOSTS=127.0.0.1",
			"QUARRY_JOB_RESCUE_AFTER=" + replicasRescueAfter,
		})
		require.NoError(t, replicas[i].start(ctx), "replica %d", i+1)
	}
	t.Logf("three replicas ready in %s", time.Since(began).Round(time.Millisecond))
	first, second, third := newClient(replicas[0].url()), newClient(replicas[1].url()), newClient(replicas[2].url())

	var started struct {
		ID string `json:"id"`
	}
	status, body, err := first.do(ctx, http.MethodPost, "/api/runs", map[string]any{"workflow": "replicas", "started_by": "replicas-test"}, &started)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	runID := started.ID

	// Replica 3's stream is open before the run can reach its gate: the
	// first webhook is held until it is.
	stream := openEvents(ctx, t, replicas[2].url(), runID)
	wit.streamOpen()
	select {
	case <-stream.checkpoint:
	case <-ctx.Done():
		t.Fatalf("replica 3's event stream never showed the checkpoint; it got:\n%s", stream.seen())
	}
	run, _, err := second.getRun(ctx, runID)
	require.NoError(t, err)
	require.NotNil(t, run.Checkpoint, "replica 2 sees no checkpoint: %+v", run)
	t.Logf("checkpoint (reached by %s's job) live on replica 3's stream after %s", wit.answeredBy("before"), time.Since(began).Round(time.Millisecond))

	status, body, err = second.do(ctx, http.MethodPost, "/api/runs/"+runID+"/decisions",
		map[string]any{"checkpoint_id": run.Checkpoint.ID, "option": "Go", "decided_by": "replicas-test"}, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, status, "%s", body)

	var victim int
	select {
	case name := <-wit.slowStarted:
		_, err := fmt.Sscanf(name, "r%d", &victim)
		require.NoError(t, err, "X-Replica %q", name)
	case <-ctx.Done():
		t.Fatal("no replica started the slow step")
	}
	killedAt := time.Now()
	replicas[victim-1].kill()
	t.Logf("killed replica %d (SIGKILL) mid-step", victim)

	survivor := []*client{first, second, third}[victim%3]
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("River's jobs and leader:\n%s", riverState(dbURL))
		}
	})
	done := waitEnded(ctx, t, survivor, runID)
	require.Equal(t, "completed", done.Status, "run error: %s", done.Error)
	t.Logf("run completed %s after the kill, the slow step by %s (%s in all)", time.Since(killedAt).Round(time.Millisecond),
		wit.answeredBy("slow"), time.Since(began).Round(time.Millisecond))

	calls := wit.counts()
	require.Equal(t, map[string]int{"before": 1, "slow": 2, "slow_answered": 1, "after": 1}, calls,
		"webhook calls: the slow stage is called once by the killed replica (never answered) and once after the rescue")
	require.NotEqual(t, fmt.Sprintf("r%d", victim), wit.answeredBy("slow"), "the killed replica cannot have finished the step")
	checkHistory(ctx, t, dbURL, runID)
}

// buildQuarry builds cmd/web into dir once for the test.
func buildQuarry(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the quarry binary: %v", err)
	}
	bin := filepath.Join(dir, "quarry")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, "quarry/cmd/web").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	t.Logf("built quarry in %s", time.Since(began).Round(time.Millisecond))
	return bin
}

// newReplica prepares one `quarry serve` of the shared database: its own
// port, spool database file, log and secrets file (REPLICA=name).
func newReplica(t *testing.T, bin, dir, name string, env []string) *server {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	secrets := filepath.Join(dir, "secrets")
	require.NoError(t, os.WriteFile(secrets, []byte("REPLICA="+name+"\n"), 0o600))
	env = append(env, "QUARRY_OPEN_MODE=true", "QUARRY_LLM_PROVIDER=offline", "QUARRY_WEBHOOK_SECRETS_FILE="+secrets)
	s, err := newServerEnv(bin, filepath.Join(dir, "quarry.db"), filepath.Join(dir, "server.log"), env...)
	require.NoError(t, err)
	return s
}

// waitEnded polls the run until it ends or ctx does.
func waitEnded(ctx context.Context, t *testing.T, c *client, runID string) runJSON {
	t.Helper()
	var last runJSON
	for {
		r, _, err := c.getRun(ctx, runID)
		if err == nil {
			last = r
			switch r.Status {
			case "completed", "failed", "canceled", "escalated":
				return r
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run did not end in time; last seen %+v (err %v)", last, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// riverState lists River's jobs and its leader, to tell why a job was not
// rescued.
func riverState(dbURL string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err.Error()
	}
	defer conn.Close(ctx)
	var b strings.Builder
	rows, err := conn.Query(ctx, `SELECT id::text, kind, state::text, attempt::text, coalesce(array_to_string(attempted_by, ','), ''),
		coalesce(attempted_at::text, ''), scheduled_at::text, now()::text, coalesce(errors::text, '') FROM river_job ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	for rows.Next() {
		var f [9]string
		if err := rows.Scan(&f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8]); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "    job %s\n", strings.Join(f[:], " | "))
	}
	var leader, elected string
	if err := conn.QueryRow(ctx, `SELECT leader_id, elected_at::text || ' expires ' || expires_at::text FROM river_leader`).Scan(&leader, &elected); err != nil {
		fmt.Fprintf(&b, "    leader: %v\n", err)
	} else {
		fmt.Fprintf(&b, "    leader %s elected %s\n", leader, elected)
	}
	return b.String()
}

// checkHistory reads the run's step history and decisions from the
// database: each stage ran to commit once, and the gate was decided once.
func checkHistory(ctx context.Context, t *testing.T, dbURL, runID string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT step, status FROM step_runs WHERE run_id = $1 ORDER BY seq`, runID)
	require.NoError(t, err)
	completed := map[string]int{}
	var trail []string
	for rows.Next() {
		var step, status string
		require.NoError(t, rows.Scan(&step, &status))
		trail = append(trail, step+":"+status)
		if status == "completed" {
			completed[step]++
		}
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]int{"before": 1, "approve": 1, "slow": 1, "after": 1}, completed, "step history %v", trail)
	var decisions int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM decisions WHERE run_id = $1`, runID).Scan(&decisions))
	require.Equal(t, 1, decisions)
	// The job the kill abandoned was rescued: another replica's River
	// client attempted it after the dead one. (Jobs the dead replica had
	// just finished may be rescued too, when River had not yet recorded
	// their completion: advancing a run that moved on does nothing.)
	// River records a completion a moment after the run's commit: poll.
	var rescued, unfinished int
	for {
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE cardinality(attempted_by) >= 2),
			count(*) FILTER (WHERE state <> 'completed') FROM river_job
			WHERE kind = 'advance_run' AND args->>'run_id' = $1`, runID).Scan(&rescued, &unfinished))
		if unfinished == 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.GreaterOrEqual(t, rescued, 1, "an advance job attempted by two clients")
	require.Zero(t, unfinished, "advance jobs not completed")
}

// witness is the webhooks' target: it counts calls by stage, holds the
// first webhook until the test's event stream is open, and holds the
// first call of the slow stage until its caller goes away (is killed).
type witness struct {
	mu    sync.Mutex
	calls map[string]int
	by    map[string]string // the replica whose call of each stage was answered

	open        chan struct{} // closed when the event stream is open
	done        chan struct{} // closed at cleanup: nothing waits any more
	doneOnce    sync.Once
	slowStarted chan string // the replica making the first slow call
}

func newWitness() *witness {
	return &witness{calls: map[string]int{}, by: map[string]string{}, open: make(chan struct{}), done: make(chan struct{}), slowStarted: make(chan string, 1)}
}

func (w *witness) streamOpen() { close(w.open) }
func (w *witness) release()    { w.doneOnce.Do(func() { close(w.done) }) }

func (w *witness) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.calls {
		out[k] = v
	}
	return out
}

// answeredBy is the replica whose call of stage was answered.
func (w *witness) answeredBy(stage string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.by[stage]
}

func (w *witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	stage := strings.TrimPrefix(r.URL.Path, "/")
	w.mu.Lock()
	w.calls[stage]++
	n := w.calls[stage]
	w.mu.Unlock()
	switch {
	case stage == "before":
		select {
		case <-w.open:
		case <-w.done:
		case <-r.Context().Done():
		}
	case stage == "slow" && n == 1:
		w.slowStarted <- r.Header.Get("X-Replica")
		select {
		case <-r.Context().Done(): // the replica was killed
		case <-w.done:
		}
		return
	case stage == "slow":
		w.mu.Lock()
		w.calls["slow_answered"]++
		w.mu.Unlock()
	}
	w.mu.Lock()
	w.by[stage] = r.Header.Get("X-Replica")
	w.mu.Unlock()
	writeJSON(rw, map[string]bool{"ok": true})
}

// eventStream reads GET /runs/:id/events of one replica and signals when
// a progress line says the run waits for a decision.
type eventStream struct {
	checkpoint chan struct{}
	mu         sync.Mutex
	lines      []string
}

func (s *eventStream) seen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// openEvents connects to the stream and returns once its first message
// (the run's state) has arrived, so later events cannot be missed.
func openEvents(ctx context.Context, t *testing.T, base, runID string) *eventStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/runs/"+runID+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s := &eventStream{checkpoint: make(chan struct{})}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "event: state" {
	}
	require.NoError(t, sc.Err())
	go func() {
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
			if !signalled && strings.HasPrefix(line, "data: ") && strings.Contains(line, "approve") && strings.Contains(line, "waiting for a decision") {
				signalled = true
				close(s.checkpoint)
			}
		}
	}()
	return s
}
