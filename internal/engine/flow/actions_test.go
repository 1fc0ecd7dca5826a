package flow_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/store"
	"quarry/internal/store/storetest"
)

// fakeActions records what the built-in actions were asked to do; fail
// makes an action fail (by name) that many times.
type fakeActions struct {
	mu       sync.Mutex
	exports  []flow.Export
	messages []flow.Message
	snaps    []string
	records  []engine.ActionRecord
	fail     map[string]int
}

func (f *fakeActions) failing(action string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[action] != 0 {
		f.fail[action]--
		return errors.New(action + ": connection refused")
	}
	return nil
}

func (f *fakeActions) Export(_ context.Context, e flow.Export) (flow.ExportResult, error) {
	if err := f.failing("export"); err != nil {
		return flow.ExportResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exports = append(f.exports, e)
	return flow.ExportResult{Path: "/exports/" + e.File, Count: len(e.Papers), Format: e.Format}, nil
}

func (f *fakeActions) Notify(_ context.Context, m flow.Message) error {
	if err := f.failing("notify"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages = append(f.messages, m)
	return nil
}

func (f *fakeActions) Snapshot(_ context.Context, runID string) (flow.SnapshotResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snaps = append(f.snaps, runID)
	return flow.SnapshotResult{Path: "/backups/" + runID + ".db", Bytes: 4096}, nil
}

func (f *fakeActions) Record(_ context.Context, r engine.ActionRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, r)
	return nil
}

func (f *fakeActions) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.records {
		out = append(out, r.Stage+":"+r.Action+":"+r.Status)
	}
	return out
}

// setupFlows compiles several definitions into one registry (parents and
// the children they start) over a store at path ("" = a fresh one).
func setupFlows(t *testing.T, path string, acts flow.Actions, skills flow.Skills, srcs ...string) *bundle {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "quarry.db")
	}
	var wfs []*engine.Workflow
	for _, src := range srcs {
		d, err := def.Load("test.yaml", []byte(src), def.Options{Skills: skills.Names(), WebhookHosts: []string{"hooks.example.org"}})
		require.NoError(t, err)
		wf, err := flow.CompileWith(d, flow.Options{Skills: skills, Actions: acts, ActionBackoff: time.Millisecond})
		require.NoError(t, err)
		wfs = append(wfs, wf)
	}
	st, err := store.Open(context.Background(), storetest.DSN(t, &pg, path), store.Options{BackupDir: filepath.Join(t.TempDir(), "backups")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	reg, err := engine.NewRegistry(wfs...)
	require.NoError(t, err)
	eng, err := engine.New(engine.Config{Store: st, Registry: reg, Handler: engine.Pending(),
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	require.NoError(t, err)
	return &bundle{store: st, eng: eng, path: path}
}

const actionsDef = head + `metadata: {name: acts}
stages:
  - id: found
    type: skill
    skill: echo
    with: {papers: [{id: p1, title: Bees}, {id: p2, title: Ants}]}
  - id: save
    type: action
    action: export
    with: {papers: "{{ outputs.found.papers }}", format: bibtex, file: "found.bib"}
  - id: backup
    type: action
    action: snapshot
  - id: tell
    type: action
    action: notify
    with:
      webhook: https://hooks.example.org/quarry
      email: [ada@example.org]
      subject: Exported
      text: "{{ outputs.save.count }} papers in {{ outputs.save.path }}"
`

func TestBuiltinActionsRunInOrder(t *testing.T) {
	t.Parallel()
	acts := &fakeActions{}
	b := setupFlows(t, "", acts, flow.Skills{"echo": echo(&counter{})}, actionsDef)
	r := b.run(t, "acts", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Len(t, acts.exports, 1)
	require.Equal(t, "bibtex", acts.exports[0].Format)
	require.Equal(t, "found.bib", acts.exports[0].File)
	require.Equal(t, "save", acts.exports[0].Stage)
	require.Equal(t, []map[string]any{{"id": "p1", "title": "Bees"}, {"id": "p2", "title": "Ants"}}, acts.exports[0].Papers)
	require.Equal(t, []string{r.ID}, acts.snaps)
	require.Equal(t, []flow.Message{
		{Webhook: "https://hooks.example.org/quarry", Subject: "Exported", Text: "2 papers in /exports/found.bib"},
		{Email: []string{"ada@example.org"}, Subject: "Exported", Text: "2 papers in /exports/found.bib"}}, acts.messages)
	out := outputsOf(t, r)
	require.JSONEq(t, `{"path": "/exports/found.bib", "count": 2, "format": "bibtex"}`, jsonOf(t, out["save"]))
	require.JSONEq(t, `{"path": "/backups/`+r.ID+`.db", "bytes": 4096}`, jsonOf(t, out["backup"]))
	require.Equal(t, []string{"save:export:ok", "backup:snapshot:ok", "tell:notify:ok"}, acts.recorded())
}

const notifyDef = head + `metadata: {name: tell}
stages:
  - id: tell
    type: action
    action: notify
    with: {webhook: "https://hooks.example.org/x", text: hi}
  - id: after
    type: skill
    skill: echo
    with: {told: "{{ outputs.tell.ok }}"}
`

// An unreachable target is tried three times, each try recorded, and
// then the stage goes on: the run completes, the failure is visible.
func TestActionRetriedThenRecordedWithoutFailingTheRun(t *testing.T) {
	t.Parallel()
	acts := &fakeActions{fail: map[string]int{"notify": 99}}
	b := setupFlows(t, "", acts, flow.Skills{"echo": echo(&counter{})}, notifyDef)
	r := b.run(t, "tell", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"tell:notify:failed", "tell:notify:failed", "tell:notify:failed"}, acts.recorded())
	require.Equal(t, 3, acts.records[2].Attempt)
	require.Equal(t, "notify: connection refused", acts.records[2].Error)
	require.JSONEq(t, `{"ok": false, "error": "notify: connection refused"}`, jsonOf(t, outputsOf(t, r)["tell"]))
	require.Equal(t, map[string]any{"told": false}, outputsOf(t, r)["after"])

	// Failing twice, it is sent on the third try.
	acts = &fakeActions{fail: map[string]int{"notify": 2}}
	b = setupFlows(t, "", acts, flow.Skills{"echo": echo(&counter{})}, notifyDef)
	r = b.run(t, "tell", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"tell:notify:failed", "tell:notify:failed", "tell:notify:ok"}, acts.recorded())
	require.Len(t, acts.messages, 1)
}

// required: true makes the failure the stage's: without on_error the run
// fails.
func TestRequiredActionFailsTheRun(t *testing.T) {
	t.Parallel()
	acts := &fakeActions{fail: map[string]int{"notify": 99}}
	src := head + `metadata: {name: tell}
stages:
  - id: tell
    type: action
    action: notify
    required: true
    with: {webhook: "https://hooks.example.org/x", text: hi}
`
	b := setupFlows(t, "", acts, nil, src)
	r := b.run(t, "tell", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, "notify: connection refused")
	require.Len(t, acts.records, 3)
}

const hooksDef = head + `metadata: {name: hooked}
params: [{name: fail, type: bool, default: false}]
stages:
  - id: work
    type: skill
    skill: maybe_fail
    with: {fail: "{{ params.fail }}"}
on_complete:
  - action: notify
    with: {webhook: "https://hooks.example.org/done"}
on_error:
  - action: notify
    with: {email: ops@example.org, text: "work failed"}
  - action: snapshot
`

func maybeFail(ctx context.Context, in flow.Input) (map[string]any, error) {
	if in.With["fail"] == true {
		return nil, errors.New("the source is down")
	}
	return map[string]any{"ok": true}, nil
}

func TestOnCompleteAndOnErrorHooks(t *testing.T) {
	t.Parallel()
	acts := &fakeActions{}
	b := setupFlows(t, "", acts, flow.Skills{"maybe_fail": maybeFail}, hooksDef)
	r := b.run(t, "hooked", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []flow.Message{{Webhook: "https://hooks.example.org/done", Text: "Quarry: run " + r.ID + " of hooked completed"}}, acts.messages)
	require.Equal(t, []string{"work:ok", "on_complete:ok"}, b.steps(t, r.ID))

	acts = &fakeActions{}
	b = setupFlows(t, "", acts, flow.Skills{"maybe_fail": maybeFail}, hooksDef)
	r = b.run(t, "hooked", map[string]any{"fail": true})
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Equal(t, `step "work" failed: the source is down`, r.Error, "the run fails with its first error")
	require.Equal(t, []flow.Message{{Email: []string{"ops@example.org"}, Text: "work failed"}}, acts.messages)
	require.Equal(t, []string{r.ID}, acts.snaps)
	require.Equal(t, []string{"on_error:notify:ok", "on_error:snapshot:ok"}, acts.recorded())
	require.Equal(t, []string{"work:failed", "on_error:ok"}, b.steps(t, r.ID))
}

// A hook that cannot reach its target is recorded and the run still
// completes; a required one fails the run, whose on_error hooks run.
func TestFailedHookRecordedUnlessRequired(t *testing.T) {
	t.Parallel()
	src := func(required bool) string {
		r := "false"
		if required {
			r = "true"
		}
		return head + `metadata: {name: hooked}
stages:
  - {id: work, type: skill, skill: maybe_fail}
on_complete:
  - {action: notify, required: ` + r + `, with: {webhook: "https://hooks.example.org/done"}}
on_error:
  - {action: snapshot}
`
	}
	acts := &fakeActions{fail: map[string]int{"notify": 99}}
	b := setupFlows(t, "", acts, flow.Skills{"maybe_fail": maybeFail}, src(false))
	r := b.run(t, "hooked", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"on_complete:notify:failed", "on_complete:notify:failed", "on_complete:notify:failed"}, acts.recorded())
	require.Empty(t, acts.snaps)

	acts = &fakeActions{fail: map[string]int{"notify": 99}}
	b = setupFlows(t, "", acts, flow.Skills{"maybe_fail": maybeFail}, src(true))
	r = b.run(t, "hooked", nil)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, "on_complete notify (required): notify: connection refused")
	require.Equal(t, []string{r.ID}, acts.snaps, "on_error ran")
	require.Equal(t, []string{"work:ok", "on_complete:failed", "on_error:ok"}, b.steps(t, r.ID))
}

const childDef = head + `metadata: {name: child}
params: [{name: topic, type: string, required: true}]
stages:
  - id: look
    type: skill
    skill: echo
    with: {topic: "{{ params.topic }}"}
  - id: ok
    type: gate
    options: [{label: Keep, next: complete}, {label: Drop, next: drop}]
  - id: drop
    type: skill
    skill: boom
`

const parentDef = head + `metadata: {name: parent}
params: [{name: wait, type: bool, default: true}]
stages:
  - id: sub
    type: action
    action: start_workflow
    with: {workflow: child, params: {topic: bees}, wait: true}
    on_error: {retry: 1, then: {goto: fallback}}
  - id: after
    type: skill
    skill: echo
    with: {seen: "{{ outputs.sub.outputs.look.topic }}", child: "{{ outputs.sub.run_id }}"}
    on_complete: complete
  - id: fallback
    type: skill
    skill: echo
    with: {fell: "back"}
`

func boom(context.Context, flow.Input) (map[string]any, error) { return nil, errors.New("boom") }

// childOf is the one run a parent's stage started, or the newest.
func childrenOf(t *testing.T, b *bundle, id string) []engine.ChildLink {
	t.Helper()
	cs, err := b.store.RunChildren(context.Background(), id)
	require.NoError(t, err)
	return cs
}

func TestStartWorkflowWaitsForTheChild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &counter{}
	b := setupFlows(t, "", nil, flow.Skills{"echo": echo(c), "boom": boom}, childDef, parentDef)
	p := b.run(t, "parent", nil)
	require.Equal(t, engine.StatusWaiting, p.Status)
	require.Empty(t, p.CheckpointID, "the parent waits for its child, not for a person")
	kids := childrenOf(t, b, p.ID)
	require.Len(t, kids, 1)
	require.Equal(t, engine.ChildLink{RunID: kids[0].RunID, Workflow: "child", Step: "sub", Wait: true, Status: engine.StatusPending}, kids[0])
	parent, err := b.store.RunParent(ctx, kids[0].RunID)
	require.NoError(t, err)
	require.Equal(t, &engine.Parent{RunID: p.ID, Step: "sub", Wait: true}, parent)

	// An advance of the parent while the child runs changes nothing.
	p = b.advance(t, p.ID)
	require.Equal(t, engine.StatusWaiting, p.Status)

	k := b.advance(t, kids[0].RunID)
	require.NoError(t, b.eng.Decide(ctx, k.ID, k.CheckpointID, flow.Choose("Keep", "", "ada")))
	k = b.advance(t, k.ID)
	require.Equal(t, engine.StatusCompleted, k.Status, k.Error)
	ids, err := b.store.ResumableRuns(ctx)
	require.NoError(t, err)
	if storetest.OnPostgres() {
		require.NotContains(t, ids, p.ID, "River holds the parent's wake, queued by the child's end: recovery leaves it to River")
	} else {
		require.Contains(t, ids, p.ID, "a parent whose child ended is resumed by Recover")
	}

	p = b.advance(t, p.ID)
	require.Equal(t, engine.StatusCompleted, p.Status, p.Error)
	require.Equal(t, map[string]any{"seen": "bees", "child": k.ID}, outputsOf(t, p)["after"])
	require.Equal(t, "completed", outputsOf(t, p)["sub"]["status"])
	require.Equal(t, []string{"sub:waiting", "sub:waiting", "sub:ok", "after:ok"}, b.steps(t, p.ID))
	p = b.advance(t, p.ID) // a late duplicate wake is a no-op
	require.Equal(t, []string{"sub:waiting", "sub:waiting", "sub:ok", "after:ok"}, b.steps(t, p.ID))
}

// A failed child fails the stage's attempt: on_error.retry starts a new
// child, and then on_error.then applies.
func TestStartWorkflowFailedChildFollowsOnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupFlows(t, "", nil, flow.Skills{"echo": echo(&counter{}), "boom": boom}, childDef, parentDef)
	p := b.run(t, "parent", nil)
	for i := range 2 {
		kids := childrenOf(t, b, p.ID)
		require.Len(t, kids, i+1)
		k := b.advance(t, kids[i].RunID)
		require.NoError(t, b.eng.Decide(ctx, k.ID, k.CheckpointID, flow.Choose("Drop", "", "ada")))
		k = b.advance(t, k.ID)
		require.Equal(t, engine.StatusFailed, k.Status)
		p = b.advance(t, p.ID)
	}
	require.Equal(t, engine.StatusCompleted, p.Status, p.Error)
	require.Equal(t, map[string]any{"fell": "back"}, outputsOf(t, p)["fallback"])
	require.Len(t, childrenOf(t, b, p.ID), 2)
	require.Equal(t, []string{"sub:waiting", "sub:waiting", "sub:goto:fallback", "fallback:ok"}, b.steps(t, p.ID))
}

func TestStartWorkflowWithoutWaiting(t *testing.T) {
	t.Parallel()
	src := head + `metadata: {name: fire}
stages:
  - id: sub
    type: action
    action: start_workflow
    with: {workflow: child, params: {topic: ants}, wait: false}
`
	b := setupFlows(t, "", nil, flow.Skills{"echo": echo(&counter{}), "boom": boom}, childDef, src)
	p := b.run(t, "fire", nil)
	require.Equal(t, engine.StatusCompleted, p.Status, p.Error)
	kids := childrenOf(t, b, p.ID)
	require.Len(t, kids, 1)
	require.False(t, kids[0].Wait)
	require.Equal(t, map[string]any{"run_id": kids[0].RunID}, outputsOf(t, p)["sub"])
	k := b.advance(t, kids[0].RunID)
	require.Equal(t, engine.StatusWaiting, k.Status, "the child goes on by itself")
	require.Equal(t, map[string]any{"topic": "ants"}, outputsOf(t, k)["look"])
}

func TestStartWorkflowCannotBeInABranch(t *testing.T) {
	t.Parallel()
	src := head + `metadata: {name: fan}
stages:
  - id: both
    type: parallel
    branches:
      - id: a
        stages:
          - {id: sub, type: action, action: start_workflow, with: {workflow: child}}
`
	d, err := def.Load("test.yaml", []byte(src), def.Options{})
	require.NoError(t, err)
	_, err = flow.CompileWith(d, flow.Options{})
	require.ErrorContains(t, err, `test.yaml:10:13: stage "sub": start_workflow cannot be in a parallel branch`)
}

// The drawing, and the exhaustive suite's "every move is an edge", see
// the on_complete hooks between the last stage and the end.
func TestGraphRunsThroughOnComplete(t *testing.T) {
	t.Parallel()
	d, err := def.Load("test.yaml", []byte(hooksDef), def.Options{Skills: []string{"maybe_fail"}, WebhookHosts: []string{"hooks.example.org"}})
	require.NoError(t, err)
	wf, err := flow.CompileWith(d, flow.Options{Skills: flow.Skills{"maybe_fail": maybeFail}, Actions: &fakeActions{}})
	require.NoError(t, err)
	var edges []string
	for _, e := range wf.Graph().Edges {
		edges = append(edges, e.From+"->"+e.To)
	}
	require.Contains(t, edges, "work->on_complete")
	require.Contains(t, edges, "on_complete->"+engine.End)
	require.NotContains(t, edges, "work->"+engine.End)
}

// Canceling a parent cancels the child it waits for; a child started
// without waiting goes on.
func TestCancelingAParentCancelsTheChildItWaitsFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupFlows(t, "", nil, flow.Skills{"echo": echo(&counter{}), "boom": boom}, childDef, parentDef)
	p := b.run(t, "parent", nil)
	kids := childrenOf(t, b, p.ID)
	require.Len(t, kids, 1)
	k := b.advance(t, kids[0].RunID)
	require.Equal(t, engine.StatusWaiting, k.Status)
	require.NoError(t, b.eng.Cancel(ctx, p.ID, "ada"))
	k, err := b.store.Run(ctx, k.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusCanceled, k.Status)
	require.Equal(t, "canceled by ada (its parent run was canceled)", k.Error)
	p = b.advance(t, p.ID) // the child's end woke it: nothing to do
	require.Equal(t, engine.StatusCanceled, p.Status)
}

// A workflow that starts itself stops at engine.MaxChildDepth runs deep.
func TestAWorkflowStartingItselfStops(t *testing.T) {
	t.Parallel()
	src := head + `metadata: {name: again}
stages:
  - id: sub
    type: action
    action: start_workflow
    with: {workflow: again, wait: false}
`
	b := setupFlows(t, "", nil, nil, src)
	r := b.run(t, "again", nil)
	ids := []string{r.ID}
	for {
		kids := childrenOf(t, b, ids[len(ids)-1])
		if len(kids) == 0 {
			break
		}
		require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
		r = b.advance(t, kids[0].RunID)
		ids = append(ids, r.ID)
	}
	require.Len(t, ids, engine.MaxChildDepth+1)
	require.Equal(t, engine.StatusFailed, r.Status)
	require.Contains(t, r.Error, "nested 8 deep already")
}

// A hook whose with cannot be evaluated is recorded as failed; the run
// still completes.
func TestHookWithABadValueIsRecorded(t *testing.T) {
	t.Parallel()
	src := head + `metadata: {name: hooked}
stages:
  - {id: work, type: skill, skill: maybe_fail}
on_complete:
  - {action: notify, with: {webhook: "https://hooks.example.org/x", text: "{{ 1 / len(outputs.work) - outputs.work.nothing }}"}}
  - {action: snapshot}
`
	acts := &fakeActions{}
	b := setupFlows(t, "", acts, flow.Skills{"maybe_fail": maybeFail}, src)
	r := b.run(t, "hooked", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"on_complete:notify:failed", "on_complete:snapshot:ok"}, acts.recorded())
}

// A notice to a webhook and an e-mail address whose webhook fails once:
// the second try posts to the webhook only, so the mail goes once.
func TestNotifyRetriesOnlyTheTargetThatFailed(t *testing.T) {
	t.Parallel()
	acts := &webhookDown{fakeActions: &fakeActions{}, down: 1}
	src := head + `metadata: {name: tell}
stages:
  - id: tell
    type: action
    action: notify
    with: {webhook: "https://hooks.example.org/x", email: ada@example.org, text: hi}
`
	b := setupFlows(t, "", acts, nil, src)
	r := b.run(t, "tell", nil)
	require.Equal(t, engine.StatusCompleted, r.Status, r.Error)
	require.Equal(t, []string{"tell:notify:failed", "tell:notify:ok"}, acts.recorded())
	require.Equal(t, []flow.Message{{Email: []string{"ada@example.org"}, Text: "hi"}, {Webhook: "https://hooks.example.org/x", Text: "hi"}}, acts.messages)
}

// webhookDown fails its first down webhook posts.
type webhookDown struct {
	*fakeActions
	down int
}

func (w *webhookDown) Notify(ctx context.Context, m flow.Message) error {
	if m.Webhook != "" && w.down > 0 {
		w.down--
		return errors.New("webhook: connection refused")
	}
	return w.fakeActions.Notify(ctx, m)
}
