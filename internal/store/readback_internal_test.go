package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/research"
)

// shown is a checkpoint payload that shows papers (as the search's
// review does).
type shown struct {
	IDs []string `json:"ids"`
}

func (shown) CheckpointKind() engine.CheckpointKind { return "shown" }
func (s shown) PaperIDs() []string                  { return s.IDs }

// A checkpoint that shows papers records them in run_papers and reads
// them back in the same transaction: when they do not read back (here a
// trigger drops the rows silently) the whole commit is rolled back — no
// checkpoint, the run unmoved.
func TestRunPapersReadBackRollsTheCommitBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := OpenForTest(t, ctx, filepath.Join(t.TempDir(), "q.db"), Options{})
	require.NoError(t, err)
	defer s.Close()
	now := time.Now().UTC()
	r := engine.Run{ID: "r1", Workflow: "w", Step: "review", Status: engine.StatusRunning, Iteration: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.CreateRun(ctx, r))
	commit := func(id string) error {
		cp, err := engine.NewCheckpoint("shown", shown{IDs: []string{"p1", "p2", "p2"}}, r.ID, 1, now)
		require.NoError(t, err)
		cp.ID, cp.Step = id, "review"
		next := r
		next.Status, next.CheckpointID = engine.StatusWaiting, id
		got, err := s.Commit(ctx, engine.Commit{From: r.Status, Run: next, NewCheckpoint: &cp,
			Step: &engine.StepRecord{RunID: r.ID, Step: "review", Iteration: 1, Attempt: 1, Outcome: "checkpoint", StartedAt: now, FinishedAt: now}})
		if err == nil {
			r = got
		}
		return err
	}
	require.NoError(t, loseP2(ctx, s, "run_papers"))
	err = commit("cp1")
	var rb *engine.ReadBackError
	require.True(t, errors.As(err, &rb), "%v", err)
	require.EqualError(t, err, `postcondition "run papers recorded" failed on reading back what was written (rolled back): 2 papers shown, 1 recorded`)
	_, _, err = s.Checkpoint(ctx, "cp1")
	require.Error(t, err, "the checkpoint was rolled back")
	got, err := s.Run(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, engine.StatusRunning, got.Status)
	var n int
	require.NoError(t, s.write.QueryRowContext(ctx, `SELECT count(*) FROM run_papers`).Scan(&n))
	require.Zero(t, n)

	require.NoError(t, keepP2(ctx, s, "run_papers"))
	require.NoError(t, commit("cp2"))
	require.NoError(t, s.write.QueryRowContext(ctx, `SELECT count(*) FROM run_papers WHERE run_id = 'r1'`).Scan(&n))
	require.Equal(t, 2, n)

	// Marks saved at that checkpoint read back the same way.
	require.NoError(t, loseP2(ctx, s, "paper_marks"))
	marks := []research.Mark{{PaperID: "p1", Mark: research.MarkRelevant, By: "ada"}, {PaperID: "p2", Mark: research.MarkRelevant, By: "ada"}}
	_, err = s.SaveMarks(ctx, r.ID, "cp2", marks)
	require.True(t, errors.As(err, &rb), "%v", err)
	require.EqualError(t, err, `postcondition "marks recorded" failed on reading back what was written (rolled back): 2 marks written, 1 stored`)
	got2, err := s.Marks(ctx, r.ID)
	require.NoError(t, err)
	require.Empty(t, got2, "no mark of the batch was kept")
	require.NoError(t, keepP2(ctx, s, "paper_marks"))
	_, err = s.SaveMarks(ctx, r.ID, "cp2", marks)
	require.NoError(t, err)
	got2, err = s.Marks(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, got2, 2)
}

// loseP2 makes table silently drop the rows of paper p2, a write that
// did not land; keepP2 undoes it. SQLite's trigger is temporary (this
// connection's); PostgreSQL's is the database's, in a test's own database.
func loseP2(ctx context.Context, s *Store, table string) error {
	q := `CREATE TEMP TRIGGER lose_` + table + ` BEFORE INSERT ON ` + table + ` WHEN NEW.paper_id = 'p2' BEGIN SELECT RAISE(IGNORE); END`
	if s.postgres() {
		if _, err := s.write.ExecContext(ctx, `CREATE OR REPLACE FUNCTION lose_p2() RETURNS trigger LANGUAGE plpgsql AS
			'BEGIN IF NEW.paper_id = ''p2'' THEN RETURN NULL; END IF; RETURN NEW; END'`); err != nil {
			return err
		}
		q = `CREATE TRIGGER lose_` + table + ` BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION lose_p2()`
	}
	_, err := s.write.ExecContext(ctx, q)
	return err
}

func keepP2(ctx context.Context, s *Store, table string) error {
	q := `DROP TRIGGER temp.lose_` + table
	if s.postgres() {
		q = `DROP TRIGGER lose_` + table + ` ON ` + table
	}
	_, err := s.write.ExecContext(ctx, q)
	return err
}
