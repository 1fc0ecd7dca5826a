package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// maxIterations is each run's loop bound: two iterations take every run
// through both checkpoints twice and through one iterate at the review.
const maxIterations = 2

// trigger is one planned kill: after the nth event of kind (counted from
// when the trigger is armed) and then delay, the server is killed, stays
// down for down, and is started again. Kinds: "timer" (delay after arming,
// no event), "search" (a request reached a fake source: mid-search),
// "checkpoint" (the driver saw a pending checkpoint and is about to decide
// it), "decision" (a decision was just answered 202). When again is set,
// the first restart is itself killed that long after it began, before it
// is ready (recovery interrupted), and the server started once more.
type trigger struct {
	kind  string
	nth   int
	delay time.Duration
	down  time.Duration
	again time.Duration
}

func (tr trigger) String() string {
	s := fmt.Sprintf("%s#%d+%s", tr.kind, tr.nth, tr.delay)
	if tr.kind == "timer" {
		s = "timer+" + tr.delay.String()
	}
	if tr.again > 0 {
		s += fmt.Sprintf(" (restart killed at +%s)", tr.again)
	}
	return s
}

// planKills draws one or two kills of random kinds and moments.
func planKills(rng *rand.Rand) []trigger {
	ms := func(n int) time.Duration { return time.Duration(rng.IntN(n+1)) * time.Millisecond }
	plan := make([]trigger, 1+rng.IntN(2))
	for i := range plan {
		var tr trigger
		switch rng.IntN(4) {
		case 0:
			tr = trigger{kind: "timer", delay: ms(3000)}
		case 1:
			tr = trigger{kind: "search", nth: 1 + rng.IntN(12), delay: ms(250)}
		case 2:
			tr = trigger{kind: "checkpoint", nth: 1 + rng.IntN(6), delay: ms(30)}
		default:
			tr = trigger{kind: "decision", nth: 1 + rng.IntN(8), delay: ms(20)}
		}
		tr.down = ms(300)
		if rng.IntN(4) == 0 {
			tr.again = time.Millisecond + ms(250)
		}
		plan[i] = tr
	}
	return plan
}

// decision is one decision the server answered 202: it must be in the
// database, as sent, and applied.
type decision struct {
	runID, checkpointID, kind, action, decidedBy string
	iteration                                    int
	revised                                      json.RawMessage
}

// trackedRun is a run the trial started and drives.
type trackedRun struct {
	id     string
	done   bool
	status string
}

// trial is one round: a fresh database, a few runs driven to completion
// through their checkpoints while the server is killed and restarted.
type trial struct {
	n   int
	cfg config
	dir string
	srv *server
	api *client
	fk  *fakes
	rng *rand.Rand // the driver's; the killer draws nothing
	bin string

	plan []trigger

	// The driver's own state (one goroutine).
	runs      []*trackedRun
	decided   map[string]bool // checkpoint IDs answered 202
	reported  map[string]bool // checkpoints already reported as pending again
	decisions []decision

	mu       sync.Mutex // guards what the killer, the fakes and the driver share
	counts   map[string]int
	armed    *armed
	kills    []string
	problems []string
}

// armed is the trigger the killer waits for.
type armed struct {
	kind string
	at   int
	fire chan struct{}
}

// result is what a trial found.
type result struct {
	runs, decisions         int
	kills                   []string
	lost, duplicated, stuck int
	problems                []string
	took                    time.Duration
}

func (r result) ok() bool {
	return r.lost == 0 && r.duplicated == 0 && r.stuck == 0 && len(r.problems) == 0
}

func (r result) summary() string {
	return fmt.Sprintf("%d kill(s) [%s], %d runs, %d decisions accepted, lost=%d duplicated=%d stuck=%d, %s",
		len(r.kills), strings.Join(r.kills, ", "), r.runs, r.decisions, r.lost, r.duplicated, r.stuck, r.took.Round(10*time.Millisecond))
}

func newTrial(n int, cfg config, bin, dir string, fk *fakes, rng *rand.Rand) *trial {
	return &trial{n: n, cfg: cfg, bin: bin, dir: dir, fk: fk, rng: rng, plan: planKills(rng),
		decided: map[string]bool{}, reported: map[string]bool{}, counts: map[string]int{}}
}

func (t *trial) problem(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.problems = append(t.problems, fmt.Sprintf(format, args...))
}

// event counts one event and fires the armed trigger when it is due.
func (t *trial) event(kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[kind]++
	if a := t.armed; a != nil && a.kind == kind && t.counts[kind] >= a.at {
		close(a.fire)
		t.armed = nil
	}
}

// arm returns what fires tr.
func (t *trial) arm(tr trigger) <-chan struct{} {
	if tr.kind == "timer" {
		fire := make(chan struct{})
		time.AfterFunc(tr.delay, func() { close(fire) })
		return fire
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	a := &armed{kind: tr.kind, at: t.counts[tr.kind] + tr.nth, fire: make(chan struct{})}
	t.armed = a
	return a.fire
}

// run does the trial and verifies the database.
func (t *trial) run(ctx context.Context) result {
	start := time.Now()
	res := t.execute(ctx)
	res.took = time.Since(start)
	return res
}

func (t *trial) execute(ctx context.Context) result {
	var res result
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		res.problems = append(res.problems, err.Error())
		return res
	}
	db := filepath.Join(t.dir, "q.db")
	srv, err := newServer(t.bin, db, filepath.Join(t.dir, "server.log"), t.fk)
	if err != nil {
		res.problems = append(res.problems, err.Error())
		return res
	}
	t.srv, t.api = srv, newClient(srv.url())
	defer srv.kill() // whatever happens, no server outlives its trial
	t.fk.hook(func() { t.event("search") })
	defer t.fk.hook(nil)
	if err := srv.start(ctx); err != nil {
		t.problem("first start: %v", err)
	} else {
		tctx, cancel := context.WithTimeout(ctx, t.cfg.trialTimeout)
		stopKiller, killerDone := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(killerDone)
			t.killer(tctx, stopKiller)
		}()
		t.drive(tctx)
		close(stopKiller)
		<-killerDone
		if len(t.kills) == 0 && tctx.Err() == nil {
			// No trigger came before the runs finished: kill at rest, so
			// every trial restarts once, and read the runs again.
			t.killAndRestart(tctx, trigger{kind: "at rest"})
			t.drive(tctx)
		}
		switch {
		case ctx.Err() != nil:
			t.problem("the program's time (-timeout) ran out during this trial: %v", context.Cause(ctx))
		case tctx.Err() != nil:
			t.problem("the runs did not all complete within -trial-timeout (%s)", t.cfg.trialTimeout)
		}
		cancel()
		if err := srv.stop(); err != nil {
			t.problem("%v", err)
		}
	}
	srv.kill()

	t.mu.Lock()
	res.kills = t.kills
	res.problems = append(res.problems, t.problems...)
	t.mu.Unlock()
	res.runs, res.decisions = len(t.runs), len(t.decisions)
	v, err := verify(ctx, db, t.runs, t.decisions)
	if err != nil {
		res.problems = append(res.problems, "verify: "+err.Error())
		return res
	}
	res.lost, res.duplicated, res.stuck = v.lost, v.duplicated, v.stuck
	res.problems = append(res.problems, v.problems...)
	return res
}

// killer kills the server at each planned moment and starts it again,
// until the plan is done or the driver has finished (stop).
func (t *trial) killer(ctx context.Context, stop <-chan struct{}) {
	for _, tr := range t.plan {
		fire := t.arm(tr)
		select {
		case <-fire:
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
		if tr.kind != "timer" {
			time.Sleep(tr.delay)
		}
		if !t.killAndRestart(ctx, tr) {
			return
		}
	}
}

func (t *trial) killAndRestart(ctx context.Context, tr trigger) bool {
	t.srv.kill()
	t.mu.Lock()
	t.kills = append(t.kills, tr.String())
	t.mu.Unlock()
	time.Sleep(tr.down)
	if tr.again > 0 {
		if err := t.srv.launch(); err != nil {
			t.problem("restart after the kill at %s: %v", tr, err)
			return false
		}
		time.Sleep(tr.again)
		t.srv.kill()
	}
	if err := t.srv.start(ctx); err != nil {
		t.problem("restart after the kill at %s: %v", tr, err)
		return false
	}
	return true
}

// questions are the runs' questions; each has several words, so the
// offline query builder makes a few queries and the fakes find papers.
func questions() []string {
	return []string{
		"sleep and memory consolidation in adults",
		"effects of exercise on depression in older people",
		"machine learning for protein structure prediction",
		"urban heat islands and public health",
		"microplastics in freshwater fish",
		"remote work and employee productivity",
	}
}

// drive starts the trial's runs (those not started yet) and answers their
// checkpoints until every run has ended or ctx is done. Transport errors
// mean the server is down: the driver just tries again.
func (t *trial) drive(ctx context.Context) {
	qs := questions()
	for len(t.runs) < t.cfg.runs {
		q := qs[(t.n+len(t.runs))%len(qs)]
		id, status, err := t.api.createRun(ctx, startInput{Question: q, MaxIterations: maxIterations,
			StrategyCheckpoint: true, StartedBy: fmt.Sprintf("chaos-%d", t.n)})
		switch {
		case err == nil:
			t.runs = append(t.runs, &trackedRun{id: id})
			continue
		case status != 0:
			t.problem("starting a run: %v", err)
			return
		}
		if !pause(ctx, 50*time.Millisecond) {
			t.problem("could not start run %d of %d within the trial's time", len(t.runs)+1, t.cfg.runs)
			return
		}
	}
	for {
		all := true
		for _, r := range t.runs {
			if !r.done {
				t.poll(ctx, r)
			}
			all = all && r.done
		}
		if all || !pause(ctx, 40*time.Millisecond) {
			return
		}
	}
}

func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// poll reads one run and, when it waits at a checkpoint, decides it.
func (t *trial) poll(ctx context.Context, r *trackedRun) {
	rj, status, err := t.api.getRun(ctx, r.id)
	if err != nil {
		if status != 0 {
			t.problem("run %s: %v", r.id, err)
		}
		return
	}
	r.status = rj.Status
	switch rj.Status {
	case "completed":
		r.done = true
		return
	case "failed", "canceled":
		r.done = true
		t.problem("run %s ended %s: %s", r.id, rj.Status, rj.Error)
		return
	}
	cp := rj.Checkpoint
	if cp == nil {
		return
	}
	if t.decided[cp.ID] {
		if !t.reported[cp.ID] {
			t.reported[cp.ID] = true
			t.problem("run %s shows checkpoint %s (%s, iteration %d) pending again after its decision was answered 202",
				r.id, cp.ID, cp.Kind, cp.Iteration)
		}
		return
	}
	t.event("checkpoint")
	d, ok := t.choose(r, cp.ID, cp.Kind, cp.Iteration, cp.Payload)
	if !ok {
		return
	}
	st, body, err := t.api.decide(ctx, r.id, d)
	switch {
	case err != nil:
		// No answer: the decision may or may not be recorded; the next
		// read of the run tells, and an undecided checkpoint is decided
		// again.
	case st == http.StatusAccepted:
		t.decided[cp.ID] = true
		t.decisions = append(t.decisions, decision{runID: r.id, checkpointID: cp.ID, kind: cp.Kind, action: d.Action,
			decidedBy: d.DecidedBy, iteration: cp.Iteration, revised: d.RevisedData})
		t.event("decision")
	case st == http.StatusConflict:
		// Decided by our own unanswered request, or moved on: read again.
	default:
		t.problem("deciding %s checkpoint %s of run %s: %d %s", cp.Kind, cp.ID, r.id, st, strings.TrimSpace(string(body)))
	}
}

// choose is the decision for a checkpoint: confirm (sometimes edit) the
// strategy; at the first review mark papers and iterate, at the last
// approve (sometimes with marks); retry an escalation, which is reported.
func (t *trial) choose(r *trackedRun, cpID, kind string, iteration int, payload json.RawMessage) (decisionInput, bool) {
	d := decisionInput{CheckpointID: cpID, Action: "approve", DecidedBy: fmt.Sprintf("chaos-%d", t.n)}
	switch kind {
	case "strategy_confirmation":
		if t.rng.IntN(4) == 0 {
			var p struct {
				Strategy map[string]any `json:"strategy"`
			}
			if err := json.Unmarshal(payload, &p); err != nil || p.Strategy == nil {
				t.problem("run %s: strategy checkpoint payload: %v", r.id, err)
				return d, false
			}
			p.Strategy["max_results_per_source"] = 10
			d.Action, d.RevisedData = "edit", mustJSON(p.Strategy)
		}
	case "result_review":
		var p struct {
			Collection struct {
				Papers []struct {
					ID string `json:"id"`
				} `json:"papers"`
			} `json:"collection"`
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			t.problem("run %s: review checkpoint payload: %v", r.id, err)
			return d, false
		}
		fb := map[string]any{}
		if n := len(p.Collection.Papers); n > 0 {
			fb["marked_relevant"] = []string{p.Collection.Papers[0].ID}
			if n > 1 {
				fb["marked_irrelevant"] = []string{p.Collection.Papers[n-1].ID}
			}
		}
		if iteration < maxIterations {
			fb["free_text_feedback"] = fmt.Sprintf("chaos trial %d: more like the first", t.n)
			d.Action, d.RevisedData = "edit", mustJSON(fb)
		} else if len(fb) > 0 && t.rng.IntN(2) == 0 {
			d.RevisedData = mustJSON(fb)
		}
	case "escalation":
		t.problem("run %s escalated at iteration %d: %s (retrying it)", r.id, iteration, strings.TrimSpace(string(payload)))
	default:
		t.problem("run %s: unknown checkpoint kind %q", r.id, kind)
		return d, false
	}
	return d, true
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	return b
}
