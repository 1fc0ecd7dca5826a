package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"time"

	"github.com/riverqueue/river"

	"quarry/internal/engine"
	"quarry/internal/fault"
)

// CreateRun inserts a pending run and its first advance job in one
// transaction: a run never exists without the job that will start it.
func (s *Store) CreateRun(ctx context.Context, r engine.Run) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.createRunTx(ctx, tx, r); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit run: %w", err)
	}
	return nil
}

// createRunTx inserts a pending run, the definition text it runs, the
// run that started it (a sub-workflow's parent) and its first advance job
// inside tx.
func (s *Store) createRunTx(ctx context.Context, tx *tx, r engine.Run) error {
	if err := insertRun(ctx, tx, r); err != nil {
		return err
	}
	if r.Source != nil {
		if err := insertSource(ctx, tx, *r.Source, r.CreatedAt); err != nil {
			return err
		}
	}
	if err := insertParent(ctx, tx, r); err != nil { // a run with or without a parent
		return err
	}
	return s.scheduleAdvanceTx(ctx, tx, r.ID)
}

func insertRun(ctx context.Context, tx *tx, r engine.Run) error {
	params, err := json.Marshal(r.Params)
	if err != nil {
		return fmt.Errorf("store: encode params: %w", err)
	}
	state, err := encodeState(r.State)
	if err != nil {
		return err
	}
	args := []any{r.ID, r.Workflow, string(params), state, r.Step, string(r.Status), max(r.Iteration, 1), r.Attempt,
		r.CheckpointID, r.Version, r.Error, formatTime(r.CreatedAt), formatTime(r.UpdatedAt)}
	q := `INSERT INTO runs
		(id, workflow, params, state, current_step, status, iteration, attempt, checkpoint_id, version, error, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?, ?, ?)`
	// A run with no project and no parent leaves project_id to its default,
	// so the statement also runs on a schema from before projects (tests
	// of upgrades). A child without a project of its own takes its
	// parent's, read in the same statement.
	if r.Project != "" || r.Parent != nil || r.StartedBy != "" {
		parent := ""
		if r.Parent != nil {
			parent = r.Parent.RunID
		}
		q = `INSERT INTO runs
		(id, workflow, params, state, current_step, status, iteration, attempt, checkpoint_id, version, error, created_at, updated_at, project_id, started_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?, ?, ?,
			COALESCE(NULLIF(?, ''), (SELECT project_id FROM runs WHERE id = ?), ''), ?)`
		args = append(args, r.Project, parent, r.StartedBy)
	}
	_, err = tx.ExecContext(ctx, q, args...)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") || pgCode(err) == pgUniqueViolation {
			return fault.Errorf(fault.EConflict, "run %s exists already", r.ID)
		}
		return fmt.Errorf("store: insert run: %w", err)
	}
	return nil
}

// insertSource keeps the definition text a run starts from under its
// hash; runs of one text share the row.
func insertSource(ctx context.Context, tx *tx, src engine.Source, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO workflow_sources (hash, name, version, file, text, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, src.Hash, src.Name, src.Version, src.File, src.Text, formatTime(at))
	if err != nil {
		return fmt.Errorf("store: keep workflow source: %w", err)
	}
	return nil
}

// WorkflowSource returns the definition text stored under hash, or an
// fault.ENotFound error.
func (s *Store) WorkflowSource(ctx context.Context, hash string) (engine.Source, error) {
	src := engine.Source{Hash: hash}
	err := s.read.QueryRowContext(ctx, `SELECT name, version, file, text FROM workflow_sources WHERE hash = ?`, hash).
		Scan(&src.Name, &src.Version, &src.File, &src.Text)
	if errors.Is(err, sql.ErrNoRows) {
		return src, fault.Errorf(fault.ENotFound, "no workflow source %q", hash)
	}
	if err != nil {
		return src, fmt.Errorf("store: workflow source %s: %w", hash, err)
	}
	return src, nil
}

func encodeState(st engine.State) (string, error) {
	if len(st) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("store: encode state: %w", err)
	}
	return string(b), nil
}

const runColumns = `id, workflow, params, state, current_step, status, iteration, attempt,
	COALESCE(checkpoint_id, ''), version, error, created_at, updated_at, project_id, started_by`

type scanner interface{ Scan(dest ...any) error }

func scanRun(row scanner) (engine.Run, error) {
	var r engine.Run
	var params, state, status, created, updated string
	if err := row.Scan(&r.ID, &r.Workflow, &params, &state, &r.Step, &status, &r.Iteration, &r.Attempt,
		&r.CheckpointID, &r.Version, &r.Error, &created, &updated, &r.Project, &r.StartedBy); err != nil {
		return r, err
	}
	r.Status = engine.Status(status)
	r.CreatedAt, r.UpdatedAt = parseTime(created), parseTime(updated)
	dec := json.NewDecoder(strings.NewReader(params))
	if err := dec.Decode(&r.Params); err != nil {
		return r, fmt.Errorf("store: run %s params: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(state), &r.State); err != nil {
		return r, fmt.Errorf("store: run %s state: %w", r.ID, err)
	}
	return r, nil
}

// Run returns one run.
func (s *Store) Run(ctx context.Context, id string) (engine.Run, error) {
	r, err := scanRun(s.read.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fault.Errorf(fault.ENotFound, "no run %q", id)
	}
	if err != nil {
		return r, fmt.Errorf("store: run %s: %w", id, err)
	}
	return r, nil
}

// RunProject returns the project run id belongs to ("" for none) from the
// covering index runs_id_project, without reading the run's state: access
// checks ask it on every request.
func (s *Store) RunProject(ctx context.Context, id string) (string, error) {
	var p string
	err := s.read.QueryRowContext(ctx, `SELECT project_id FROM runs `+s.read.d.indexedBy("runs_id_project")+` WHERE id = ?`, id).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fault.Errorf(fault.ENotFound, "no run %q", id)
	}
	if err != nil {
		return "", fmt.Errorf("store: project of run %s: %w", id, err)
	}
	return p, nil
}

// RunStamp names what a run's pages show at one moment: the run row's
// version, bumped by every commit and decision (with the checkpoints,
// decisions and step records they write), and its newest mark's seq,
// since marks live outside the run's state. Equal stamps mean equal
// pages, so the web layer can keep a decoded run under its stamp.
type RunStamp struct {
	Version int64
	MarkSeq int64
	// Branches grows with every branch commit of a parallel stage, which
	// leaves the run row alone.
	Branches int64
}

// runStampSQL reads the stamp from two covering indexes (migration
// 00009): from the runs table itself, version sits behind the state and
// reading it walks the state's overflow pages, megabytes for a large run.
// SQLite would pick the primary key's index, hence INDEXED BY.
func runStampSQL(d dialect) string {
	return `SELECT version,
	COALESCE((SELECT MAX(seq) FROM paper_marks WHERE run_id = runs.id), 0),
	COALESCE((SELECT SUM(version) FROM branch_runs WHERE run_id = runs.id), 0) FROM runs ` + d.indexedBy("runs_id_version") + ` WHERE id = ?`
}

// RunStamp returns the run's stamp, without reading its state.
func (s *Store) RunStamp(ctx context.Context, id string) (RunStamp, error) {
	var st RunStamp
	var row *sql.Row
	if s.stmts.runStamp != nil {
		row = s.stmts.runStamp.QueryRowContext(ctx, id)
	} else {
		row = s.read.QueryRowContext(ctx, runStampSQL(s.read.d), id)
	}
	err := row.Scan(&st.Version, &st.MarkSeq, &st.Branches)
	if errors.Is(err, sql.ErrNoRows) {
		return st, fault.Errorf(fault.ENotFound, "no run %q", id)
	}
	if err != nil {
		return st, fmt.Errorf("store: run %s stamp: %w", id, err)
	}
	return st, nil
}

// Runs returns the runs with the given IDs that exist, newest first.
func (s *Store) Runs(ctx context.Context, ids []string) ([]engine.Run, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q := `SELECT ` + runColumns + ` FROM runs WHERE id IN (?` + strings.Repeat(",?", len(ids)-1) + `) ORDER BY created_at DESC`
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	var out []engine.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Commit applies one engine transition atomically: the run's new position
// and state, its audit record, and any checkpoint and decision, so a crash
// never leaves a step's result without its transition.
func (s *Store) Commit(ctx context.Context, c engine.Commit) (engine.Run, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return engine.Run{}, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if c.NewCheckpoint != nil {
		if err := insertCheckpoint(ctx, tx, *c.NewCheckpoint); err != nil {
			return engine.Run{}, err
		}
		if c.Run.CheckpointID == c.NewCheckpoint.ID { // a person is asked: keep the state, for forks
			if err := insertCheckpointState(ctx, tx, c.NewCheckpoint.ID, c.Run.State); err != nil {
				return engine.Run{}, err
			}
		}
	}
	if err := s.updateRun(ctx, tx, c.From, c.Run); err != nil {
		return engine.Run{}, err
	}
	if c.Decision != nil {
		if c.NewCheckpoint == nil || c.NewCheckpoint.ID != c.Decision.CheckpointID {
			// A decision on the checkpoint the run waits at (a gate's
			// timer): it must still be pending.
			res, err := tx.ExecContext(ctx, `UPDATE checkpoints SET status = 'decided' WHERE id = ? AND status = 'pending'`, c.Decision.CheckpointID)
			if err != nil {
				return engine.Run{}, fmt.Errorf("store: decide checkpoint: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return engine.Run{}, fault.Errorf(fault.EConflict, "checkpoint %s is no longer pending", c.Decision.CheckpointID)
			}
		}
		if err := insertDecision(ctx, tx, c.Run.ID, *c.Decision); err != nil {
			return engine.Run{}, err
		}
	}
	if c.ResolveCheckpoint != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE checkpoints SET status = 'expired' WHERE id = ? AND status = 'pending'`, c.ResolveCheckpoint); err != nil {
			return engine.Run{}, fmt.Errorf("store: resolve checkpoint: %w", err)
		}
		if err := cancelTimerTx(ctx, tx, c.ResolveCheckpoint); err != nil {
			return engine.Run{}, err
		}
	}
	timerJob, err := s.writeTimerTx(ctx, tx, c.Timer, c.Notices)
	if err != nil {
		return engine.Run{}, err
	}
	if c.Step != nil {
		if err := s.insertStepRun(ctx, tx, c.Run.Version+1, *c.Step); err != nil {
			return engine.Run{}, err
		}
	}
	if len(c.Checks) > 0 {
		if err := insertGateChecks(ctx, tx, c.Run.ID, c.Run.Version+1, c.Checks); err != nil {
			return engine.Run{}, err
		}
	}
	var wakeJob int64
	if !c.WakeAt.IsZero() {
		if wakeJob, err = s.scheduleAdvanceAtTx(ctx, tx, c.Run.ID, c.WakeAt); err != nil {
			return engine.Run{}, err
		}
	}
	if c.EndBranches {
		if err := cancelBranches(ctx, tx, c.Run.ID, formatTime(c.Run.UpdatedAt)); err != nil {
			return engine.Run{}, err
		}
	}
	if len(c.Branches) > 0 {
		if err := s.insertBranches(ctx, tx, c.Run.Version+1, c.Branches); err != nil {
			return engine.Run{}, err
		}
	}
	queued := false
	if c.Child != nil {
		if err := s.createRunTx(ctx, tx, *c.Child); err != nil {
			return engine.Run{}, err
		}
		queued = true
	}
	if c.Run.Status.IsComplete() && !c.From.IsComplete() {
		woke, err := s.wakeParent(ctx, tx, c.Run.ID)
		if err != nil {
			return engine.Run{}, err
		}
		queued = queued || woke
	}
	if len(c.ReadBacks) > 0 {
		if err := engine.CheckReadBacks(ctx, c, txWritten{tx: tx, runID: c.Run.ID}); err != nil {
			return engine.Run{}, err // rolled back
		}
	}
	if err := tx.Commit(); err != nil {
		return engine.Run{}, fmt.Errorf("store: commit step: %w", err)
	}
	if wakeJob != 0 {
		s.promptAt(c.WakeAt, wakeJob, river.QueueDefault)
	}
	if timerJob != 0 {
		s.promptAt(c.Timer.Due, timerJob, river.QueueDefault)
	}
	if queued {
		s.Wake(context.WithoutCancel(ctx))
	}
	r := c.Run
	r.Version++
	return r, nil
}

const updateRunSQL = `UPDATE runs SET state = ?, current_step = ?, status = ?, iteration = ?, attempt = ?,
	checkpoint_id = NULLIF(?, ''), error = ?, version = version + 1, updated_at = ?
	WHERE id = ? AND version = ?`

// updateRunSameStatusSQL leaves status out of SET: SQLite rewrites an
// index entry whenever its column is assigned, even to the same value, so
// naming status would dirty the runs_status page on every step.
const updateRunSameStatusSQL = `UPDATE runs SET state = ?, current_step = ?, iteration = ?, attempt = ?,
	checkpoint_id = NULLIF(?, ''), error = ?, version = version + 1, updated_at = ?
	WHERE id = ? AND version = ? AND status = ?`

func (s *Store) updateRun(ctx context.Context, tx *tx, from engine.Status, r engine.Run) error {
	state, err := encodeState(r.State)
	if err != nil {
		return err
	}
	var res sql.Result
	if from == r.Status {
		res, err = tx.StmtContext(ctx, s.stmts.updateRunSameStatus).ExecContext(ctx,
			state, r.Step, r.Iteration, r.Attempt, r.CheckpointID, r.Error, formatTime(r.UpdatedAt), r.ID, r.Version, string(r.Status))
	} else {
		res, err = tx.StmtContext(ctx, s.stmts.updateRun).ExecContext(ctx,
			state, r.Step, string(r.Status), r.Iteration, r.Attempt, r.CheckpointID, r.Error, formatTime(r.UpdatedAt), r.ID, r.Version)
	}
	if err != nil {
		return fmt.Errorf("store: update run %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var v int64
		if err := tx.QueryRowContext(ctx, `SELECT version FROM runs WHERE id = ?`, r.ID).Scan(&v); errors.Is(err, sql.ErrNoRows) {
			return fault.Errorf(fault.ENotFound, "no run %q", r.ID)
		}
		return fault.Errorf(fault.EConflict, "run %s changed concurrently (version %d, expected %d)", r.ID, v, r.Version)
	}
	return nil
}

const insertStepRunSQL = `INSERT INTO step_runs
	(run_id, seq, step, iteration, attempt, outcome, error, started_at, finished_at, duration_ms, output, status, max_attempts)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *Store) insertStepRun(ctx context.Context, tx *tx, seq int64, r engine.StepRecord) error {
	var output any
	if len(r.Output) > 0 {
		output = string(r.Output)
	}
	var st *sql.Stmt
	var err error
	if s.stmts.insertStepRun != nil {
		st = tx.StmtContext(ctx, s.stmts.insertStepRun)
	} else if st, err = tx.PrepareContext(ctx, insertStepRunSQL); err != nil {
		return fmt.Errorf("store: insert step run: %w", err)
	}
	_, err = st.ExecContext(ctx,
		r.RunID, seq, r.Step, r.Iteration, r.Attempt, r.Outcome, r.Error, formatTime(r.StartedAt), formatTime(r.FinishedAt),
		float64(r.Duration().Microseconds())/1000, output, r.Status(), r.MaxAttempts)
	if err != nil {
		return fmt.Errorf("store: insert step run: %w", err)
	}
	return nil
}

// insertGateChecks records a gate visit's checks under the seq of its
// step record.
func insertGateChecks(ctx context.Context, tx *tx, runID string, seq int64, checks []engine.GateCheck) error {
	for n, c := range checks {
		var result any
		if len(c.Result) > 0 && string(c.Result) != "null" {
			result = string(c.Result)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO gate_checks
			(run_id, seq, n, stage, iteration, type, config, passed, result, error, checked_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, seq, n, c.Stage, max(c.Iteration, 1), c.Type, c.Config, c.Passed, result, c.Error, formatTime(c.CheckedAt))
		if err != nil {
			return fmt.Errorf("store: insert gate check: %w", err)
		}
	}
	return nil
}

// GateChecks returns every check the run's gates made, in order.
func (s *Store) GateChecks(ctx context.Context, runID string) ([]engine.GateCheck, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT stage, iteration, seq, type, config, passed, result, error, checked_at
		FROM gate_checks WHERE run_id = ? ORDER BY seq, n`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: gate checks: %w", err)
	}
	defer rows.Close()
	out := []engine.GateCheck{}
	for rows.Next() {
		var c engine.GateCheck
		var result sql.NullString
		var at string
		if err := rows.Scan(&c.Stage, &c.Iteration, &c.Seq, &c.Type, &c.Config, &c.Passed, &result, &c.Error, &at); err != nil {
			return nil, fmt.Errorf("store: gate checks: %w", err)
		}
		c.Result = json.RawMessage("null")
		if result.Valid {
			c.Result = json.RawMessage(result.String)
		}
		c.CheckedAt = parseTime(at)
		out = append(out, c)
	}
	return out, rows.Err()
}

func insertCheckpoint(ctx context.Context, tx *tx, cp engine.Checkpoint) error {
	payload, err := json.Marshal(cp.Payload)
	if err != nil {
		return fmt.Errorf("store: encode checkpoint payload: %w", err)
	}
	status := cp.Status
	if status == "" {
		status = engine.CheckpointPending
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO checkpoints (id, run_id, step, kind, payload, iteration, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		cp.ID, cp.RunID, cp.Step, string(cp.Kind), string(payload), cp.Iteration, string(status), formatTime(cp.Timestamp))
	if err != nil {
		return fmt.Errorf("store: insert checkpoint: %w", err)
	}
	if pl, ok := cp.Payload.(paperLister); ok {
		return insertRunPapers(ctx, tx, cp.RunID, cp.Iteration, pl.PaperIDs())
	}
	return nil
}

// paperLister is a checkpoint payload that shows papers (the search
// workflow's review: pipeline.ResultPayload). The store records them in
// run_papers with the checkpoint, so a paper's page finds its runs without
// decoding any run; the store names no workflow's types to do it.
type paperLister interface {
	PaperIDs() []string
}

// insertRunPapers records that run showed the papers ids, keeping the
// iteration each was first shown in.
func insertRunPapers(ctx context.Context, tx *tx, runID string, iteration int, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO run_papers (paper_id, run_id, iteration) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return fmt.Errorf("store: record run papers: %w", err)
	}
	defer st.Close()
	distinct := map[string]bool{}
	for _, id := range ids {
		if id == "" {
			continue
		}
		distinct[id] = true
		if _, err := st.ExecContext(ctx, id, runID, iteration); err != nil {
			return fmt.Errorf("store: record run papers: %w", err)
		}
	}
	// Postcondition: every paper shown reads back as the run's, in this
	// transaction; otherwise the checkpoint's commit is rolled back.
	list, err := json.Marshal(slices.Collect(maps.Keys(distinct)))
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM run_papers WHERE run_id = ? AND paper_id IN `+tx.d.jsonTexts("?"),
		runID, string(list)).Scan(&n); err != nil {
		return fmt.Errorf("store: read back run papers: %w", err)
	}
	if n != len(distinct) {
		return &engine.ReadBackError{Name: "run papers recorded", Err: fmt.Errorf("%d papers shown, %d recorded", len(distinct), n)}
	}
	return nil
}

func insertDecision(ctx context.Context, tx *tx, runID string, d engine.DecisionRecord) error {
	var revised any
	if len(d.RevisedData) > 0 {
		revised = string(d.RevisedData)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO decisions (checkpoint_id, run_id, action, revised_data, note, decided_by, decided_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		d.CheckpointID, runID, string(d.Action), revised, d.Note, d.DecidedBy, formatTime(d.DecidedAt))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") || pgCode(err) == pgUniqueViolation {
			return fault.Errorf(fault.EConflict, "checkpoint %s was already decided", d.CheckpointID)
		}
		return fmt.Errorf("store: insert decision: %w", err)
	}
	return nil
}

const checkpointColumns = `c.id, c.run_id, c.step, c.kind, c.payload, c.iteration, c.status, c.created_at,
	d.action, d.revised_data, d.note, d.decided_by, d.decided_at`

func scanCheckpoint(row scanner) (engine.Checkpoint, *engine.DecisionRecord, error) {
	var cp engine.Checkpoint
	var kind, payload, status, created string
	var action, revised, note, by, at sql.NullString
	if err := row.Scan(&cp.ID, &cp.RunID, &cp.Step, &kind, &payload, &cp.Iteration, &status, &created,
		&action, &revised, &note, &by, &at); err != nil {
		return cp, nil, err
	}
	cp.Kind = engine.CheckpointKind(kind)
	cp.Status = engine.CheckpointStatus(status)
	cp.Timestamp = parseTime(created)
	cp.Payload = engine.RawPayload{Kind: cp.Kind, JSON: json.RawMessage(payload)}
	if !action.Valid {
		return cp, nil, nil
	}
	d := &engine.DecisionRecord{CheckpointID: cp.ID, DecidedAt: parseTime(at.String)}
	d.Action = engine.DecisionAction(action.String)
	if revised.Valid {
		d.RevisedData = json.RawMessage(revised.String)
	}
	d.Note, d.DecidedBy = note.String, by.String
	return cp, d, nil
}

// Checkpoint returns a checkpoint and its decision (nil while undecided).
func (s *Store) Checkpoint(ctx context.Context, id string) (engine.Checkpoint, *engine.DecisionRecord, error) {
	cp, d, err := scanCheckpoint(s.read.QueryRowContext(ctx, `SELECT `+checkpointColumns+`
		FROM checkpoints c LEFT JOIN decisions d ON d.checkpoint_id = c.id WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return cp, nil, fault.Errorf(fault.ENotFound, "no checkpoint %q", id)
	}
	if err != nil {
		return cp, nil, fmt.Errorf("store: checkpoint %s: %w", id, err)
	}
	return cp, d, nil
}

// CheckpointDecision is a checkpoint with its decision, for history pages.
type CheckpointDecision struct {
	Checkpoint engine.Checkpoint
	Decision   *engine.DecisionRecord
}

// Checkpoints returns a run's checkpoints, oldest first, with decisions.
func (s *Store) Checkpoints(ctx context.Context, runID string) ([]CheckpointDecision, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+checkpointColumns+`
		FROM checkpoints c LEFT JOIN decisions d ON d.checkpoint_id = c.id
		WHERE c.run_id = ? ORDER BY c.created_at, c.rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints: %w", err)
	}
	defer rows.Close()
	var out []CheckpointDecision
	for rows.Next() {
		cp, d, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("store: checkpoints: %w", err)
		}
		out = append(out, CheckpointDecision{Checkpoint: cp, Decision: d})
	}
	return out, rows.Err()
}

// StepTrail is a run's audit trail for pages and polls (engine.Progress):
// StepRuns without the outputs over engine.MaxShownOutput bytes, whose
// size alone is read, since a search's output holds every paper found.
func (s *Store) StepTrail(ctx context.Context, runID string) ([]engine.StepRecord, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT step, iteration, attempt, max_attempts, outcome, error,
		CASE WHEN `+s.read.d.byteLength("output")+` <= ? THEN output END, COALESCE(`+s.read.d.byteLength("output")+`, 0)
		FROM step_runs WHERE run_id = ? ORDER BY seq`, engine.MaxShownOutput, runID)
	if err != nil {
		return nil, fmt.Errorf("store: step trail: %w", err)
	}
	defer rows.Close()
	var out []engine.StepRecord
	for rows.Next() {
		r := engine.StepRecord{RunID: runID}
		var output sql.NullString
		var size int
		if err := rows.Scan(&r.Step, &r.Iteration, &r.Attempt, &r.MaxAttempts, &r.Outcome, &r.Error, &output, &size); err != nil {
			return nil, fmt.Errorf("store: step trail: %w", err)
		}
		if output.Valid {
			r.Output = json.RawMessage(output.String)
		} else if size > 0 {
			r.OutputSize = size
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// StepRuns returns a run's audit trail, in order.
func (s *Store) StepRuns(ctx context.Context, runID string) ([]engine.StepRecord, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT run_id, step, iteration, attempt, max_attempts, outcome, error, started_at, finished_at, output
		FROM step_runs WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: step runs: %w", err)
	}
	defer rows.Close()
	var out []engine.StepRecord
	for rows.Next() {
		var r engine.StepRecord
		var started, finished string
		var output sql.NullString
		if err := rows.Scan(&r.RunID, &r.Step, &r.Iteration, &r.Attempt, &r.MaxAttempts, &r.Outcome, &r.Error, &started, &finished, &output); err != nil {
			return nil, fmt.Errorf("store: step runs: %w", err)
		}
		r.StartedAt, r.FinishedAt = parseTime(started), parseTime(finished)
		if output.Valid {
			r.Output = json.RawMessage(output.String)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Decide records a decision on a pending checkpoint, puts the run back to
// running and queues its advance in one transaction, so a recorded decision
// is never lost. The writer connection serialises deciders: of many racing,
// exactly one finds the checkpoint pending; the others get EConflict naming
// who decided and when.
func (s *Store) Decide(ctx context.Context, runID string, d engine.DecisionRecord) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	cp, prev, err := scanCheckpoint(tx.QueryRowContext(ctx, `SELECT `+checkpointColumns+`
		FROM checkpoints c LEFT JOIN decisions d ON d.checkpoint_id = c.id WHERE c.id = ?`, d.CheckpointID))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && cp.RunID != runID) {
		return fault.Errorf(fault.ENotFound, "run %s has no checkpoint %s", runID, d.CheckpointID)
	}
	if err != nil {
		return fmt.Errorf("store: decide: %w", err)
	}
	if prev != nil {
		return engine.ConflictDecided(*prev)
	}
	if cp.Status != engine.CheckpointPending {
		return fault.Errorf(fault.EConflict, "this checkpoint is %s; the run has moved on", cp.Status)
	}
	if err := s.decideTx(ctx, tx, runID, cp, d); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit decision: %w", err)
	}
	return nil
}

// decideTx records d on the pending checkpoint cp, puts the run back to
// running and queues its advance (Decide, and the vote that resolves a
// gate).
func (s *Store) decideTx(ctx context.Context, tx *tx, runID string, cp engine.Checkpoint, d engine.DecisionRecord) error {
	if err := insertDecision(ctx, tx, runID, d); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE checkpoints SET status = 'decided' WHERE id = ?`, cp.ID); err != nil {
		return fmt.Errorf("store: decide: %w", err)
	}
	if err := cancelTimerTx(ctx, tx, cp.ID); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'running', version = version + 1, updated_at = ?
		WHERE id = ? AND checkpoint_id = ? AND status IN ('waiting', 'escalated')`, formatTime(s.Now()), runID, cp.ID)
	if err != nil {
		return fmt.Errorf("store: decide: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.Errorf(fault.EConflict, "run %s is not waiting at this checkpoint", runID)
	}
	return s.scheduleAdvanceTx(ctx, tx, runID)
}

// ResumableRuns lists runs that were pending or running, runs waiting
// on a parallel stage's branches, and runs waiting for a child run that
// has ended: after a crash these are the ones to resume from their last
// committed step (a join whose last branch ended just before the crash
// must still happen; so must a parent's wake, should its job be lost).
//
// On PostgreSQL a run whose job River still holds (queued, due later, or
// running on a live replica) is left to River: a replica that starts
// while others work must not run their steps a second time at once, and
// a job whose replica died is River's to rescue (QueueOptions.RescueAfter).
func (s *Store) ResumableRuns(ctx context.Context) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM runs WHERE (status IN ('pending', 'running')
		OR (status = 'waiting' AND checkpoint_id IS NULL AND EXISTS (SELECT 1 FROM branch_runs b WHERE b.run_id = runs.id AND b.step = runs.current_step))
		OR (status = 'waiting' AND checkpoint_id IS NULL AND EXISTS (SELECT 1 FROM run_parents p JOIN runs c ON c.id = p.run_id
			WHERE p.parent_run = runs.id AND p.parent_step = runs.current_step AND p.wait = 1 AND c.status IN ('completed', 'failed', 'canceled'))))
		`+s.riverHolds("advance_run", "j.args->>'run_id' = runs.id")+`
		ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("store: resumable runs: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// txWritten reads a run's state as a commit's transaction holds it, for
// the step's read-back postconditions (engine.ReadBack).
type txWritten struct {
	tx    *tx
	runID string
}

// State reads one key of the state.
func (w txWritten) State(ctx context.Context, key string) (json.RawMessage, bool, error) {
	var raw sql.NullString
	if err := w.tx.QueryRowContext(ctx, `SELECT `+w.tx.d.jsonFieldJSON("state", "?1")+` FROM runs WHERE id = ?2`, w.tx.d.jsonKey(key), w.runID).Scan(&raw); err != nil {
		return nil, false, fmt.Errorf("store: read back %s: %w", key, err)
	}
	if !raw.Valid {
		return nil, false, nil
	}
	return json.RawMessage(raw.String), true, nil
}
