package dbcopy_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // goose's reference schema
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/pgtest"
	"quarry/internal/research"
	"quarry/internal/store"
	"quarry/internal/store/dbcopy"
	"quarry/migrations"
)

var pg pgtest.Shared

type reviewPayload struct {
	Papers []string `json:"papers"`
}

func (reviewPayload) CheckpointKind() engine.CheckpointKind { return "review" }

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// When the seeded gate timer and delay are due.
var (
	timerDue = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	wakeDue  = time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
)

// seeded is a SQLite installation with rows in many tables, built through
// the store and, where the store has no plain setter, through SQL.
func seeded(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := store.Open(ctx, path, store.Options{Synchronous: "OFF"})
	require.NoError(t, err)
	at := time.Date(2025, 3, 1, 9, 0, 0, 123456789, time.UTC)

	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "acc1", Email: "ada@example.org", Name: "Ada Lovelace", PasswordHash: "h", Admin: true, CreatedAt: at}))
	require.NoError(t, st.CreateAccount(ctx, store.Account{ID: "acc2", Email: "zoë@example.org", Name: "Zoë Ørsted", CreatedAt: at}))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "prj1", Name: "Sleep & memory", CreatedAt: at}, "acc1"))
	require.NoError(t, st.SetMember(ctx, "prj1", "acc2", "reviewer"))
	_, err = st.SettingOrInit(ctx, "session_key", []byte{0, 1, 2, 0xfe, 0xff})
	require.NoError(t, err)
	_, err = st.SettingOrInit(ctx, "motd", []byte("héllo"))
	require.NoError(t, err)

	papers := []store.ImportPaper{
		{RawPaper: research.RawPaper{ID: "doi:10.1/a", Title: "Sleep spindles — a review", Authors: []string{"Ørsted, Z.", "李, 雷"}, Year: 2021, Venue: "Sleep", Abstract: "Ünïcödé abstract 🧠", DOI: "10.1/a"}, Origin: "a.ris"},
		{RawPaper: research.RawPaper{ID: "doi:10.1/b", Title: "Memory consolidation", Year: 2019}, Origin: "a.ris", Extra: []byte(`{"k":"v"}`)},
	}
	for i := range 300 {
		papers = append(papers, store.ImportPaper{RawPaper: research.RawPaper{ID: fmt.Sprintf("pmid:%d", 1000+i), Title: fmt.Sprintf("Paper %d on sleep", i), Year: 2000 + i%25, PMID: fmt.Sprint(1000 + i)}, Origin: "b.ris"})
	}
	_, err = st.WritePapers(ctx, papers)
	require.NoError(t, err)
	_, err = st.SelectPapers(ctx, "prj1", "acc1", []string{"doi:10.1/a", "doi:10.1/b"})
	require.NoError(t, err)

	for i, id := range []string{"run1", "run2", "run3"} {
		r := engine.Run{ID: id, Workflow: "search", Params: engine.Params{"question": "sleep " + id}, Status: engine.StatusPending, Iteration: 1, CreatedAt: at.Add(time.Duration(i) * time.Hour), UpdatedAt: at}
		require.NoError(t, st.CreateRun(ctx, r))
		next := r
		next.Status = engine.StatusWaiting
		cp := engine.Checkpoint{ID: id + "-cp1", RunID: id, Step: "review", Kind: "review",
			Payload: reviewPayload{Papers: []string{"doi:10.1/a", "doi:10.1/b"}}, Iteration: 1, Timestamp: at}
		next.CheckpointID = cp.ID
		c := engine.Commit{Run: next, From: r.Status, NewCheckpoint: &cp}
		if id == "run3" { // a gate waiting on its timer: a job due in 2030
			c.Timer = &engine.GateTimer{CheckpointID: cp.ID, RunID: id, Stage: "review", Iteration: 1, Due: timerDue, Status: engine.TimerPending, CreatedAt: at}
		}
		_, err := st.Commit(ctx, c)
		require.NoError(t, err)
		_, err = st.SaveMarks(ctx, id, cp.ID, []research.Mark{{PaperID: "doi:10.1/a", Mark: "relevant", Note: "ключевая", By: "Ada"}, {PaperID: "doi:10.1/b", Mark: "irrelevant", Reason: "off topic", By: "Zoë"}})
		require.NoError(t, err)
	}
	// A run waiting on a delay stage: its advance is due in 2031.
	delayed := engine.Run{ID: "run4", Workflow: "search", Status: engine.StatusPending, Iteration: 1, CreatedAt: at, UpdatedAt: at}
	require.NoError(t, st.CreateRun(ctx, delayed))
	waiting := delayed
	waiting.Status = engine.StatusWaiting
	_, err = st.Commit(ctx, engine.Commit{Run: waiting, From: delayed.Status, WakeAt: wakeDue})
	require.NoError(t, err)
	_, err = st.AttachRunFile(ctx, store.RunFile{RunID: "run2", Name: "extra.ris", Format: "ris", Papers: []research.RawPaper{{ID: "doi:10.9/z", Title: "Attached"}}, UploadedBy: "Ada"})
	require.NoError(t, err)
	_, err = st.Backup(ctx, store.BackupManual, "")
	require.NoError(t, err)
	require.NoError(t, st.Decide(ctx, "run1", engine.DecisionRecord{Decision: engine.Decision{Action: engine.Approve, DecidedBy: "Ada", Note: "ok ✓"}, CheckpointID: "run1-cp1", DecidedAt: at}))
	require.NoError(t, st.Close())

	// What the store sets only in passing: a vector (a blob), a paper
	// with NULL extra and compounds, a REAL-free integer edge.
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.ExecContext(ctx, `INSERT INTO paper_vectors (model, docid, dim, vector) SELECT 'm', docid, 3, x'00ff10207f' FROM papers WHERE id = 'doi:10.1/a'`)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `INSERT INTO papers (id, title, imported_at, extra, compounds, year) VALUES ('x:null', 'Nulls', '2025-01-01T00:00:00Z', NULL, NULL, 9223372036854775807)`)
	require.NoError(t, err)
	return path
}

func openSource(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := dbcopy.OpenSQLite(path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, ctx context.Context, conn *pgx.Conn, q string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, conn.QueryRow(ctx, q, args...).Scan(&n))
	return n
}

func TestCopy(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	src := openSource(t, seeded(t))

	var progressed []string
	start := time.Now()
	rep, err := dbcopy.Copy(ctx, src, url, dbcopy.Options{Progress: func(table string, done, total int64) {
		if done == total {
			progressed = append(progressed, table)
		}
	}})
	require.NoError(t, err)
	t.Logf("copied in %v", time.Since(start))
	require.NotZero(t, rep.Version)
	byName := map[string]dbcopy.TableReport{}
	for _, tr := range rep.Tables {
		t.Logf("%-20s %6d rows %s", tr.Name, tr.Rows, tr.Checksum[:12])
		require.True(t, tr.Match, tr.Name)
		byName[tr.Name] = tr
	}
	require.Len(t, progressed, len(rep.Tables), "every table reports its end")
	require.EqualValues(t, 303, byName["papers"].Rows)
	require.EqualValues(t, 4, byName["runs"].Rows)
	require.EqualValues(t, 3, byName["checkpoints"].Rows)
	require.EqualValues(t, 1, byName["decisions"].Rows)
	require.EqualValues(t, 6, byName["paper_marks"].Rows)
	require.EqualValues(t, 2, byName["accounts"].Rows)
	require.EqualValues(t, 2, byName["project_papers"].Rows)
	require.EqualValues(t, 1, byName["paper_vectors"].Rows)
	require.EqualValues(t, 1, byName["vector_generation"].Rows)
	require.EqualValues(t, 1, byName["run_files"].Rows, "run files are rows")
	require.EqualValues(t, 1, byName["backups"].Rows)
	for _, n := range rep.Notes {
		t.Log("note: ", n)
	}
	require.Len(t, rep.Notes, 2)
	require.Contains(t, rep.Notes[0], "River's job table was not copied")
	require.Contains(t, rep.Notes[0], "queued again in PostgreSQL, each at its time (6 advance_run, 1 gate_timer)",
		"the seeded runs' and the decision's queued advances (no workers ran), run4's delayed one, run3's timer")
	require.Contains(t, rep.Notes[1], "1 backup(s) listed in table backups are SQLite files on disk")
	require.EqualValues(t, 303, byName["library_log"].Rows, "the copy's own inserts did not log (triggers off)")
	for _, excluded := range []string{"goose_db_version", "river_job", "river_migration"} {
		require.NotContains(t, byName, excluded)
	}
	// Parents come first.
	pos := map[string]int{}
	for i, tr := range rep.Tables {
		pos[tr.Name] = i
	}
	require.Less(t, pos["runs"], pos["checkpoints"])
	require.Less(t, pos["checkpoints"], pos["decisions"])
	require.Less(t, pos["accounts"], pos["project_members"])

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var title, authors, abstract string
	var extra, compounds *string
	require.NoError(t, conn.QueryRow(ctx, `SELECT title, authors, abstract, extra, compounds FROM papers WHERE id = 'doi:10.1/a'`).Scan(&title, &authors, &abstract, &extra, &compounds))
	require.Equal(t, "Sleep spindles — a review", title)
	require.Contains(t, authors, "李, 雷")
	require.Equal(t, "Ünïcödé abstract 🧠", abstract)
	var year int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT year, extra, compounds FROM papers WHERE id = 'x:null'`).Scan(&year, &extra, &compounds))
	require.EqualValues(t, int64(9223372036854775807), year)
	require.Nil(t, extra)
	require.Nil(t, compounds)
	var key []byte
	require.NoError(t, conn.QueryRow(ctx, `SELECT value FROM settings WHERE key = 'session_key'`).Scan(&key))
	require.Equal(t, []byte{0, 1, 2, 0xfe, 0xff}, key)
	var vec []byte
	require.NoError(t, conn.QueryRow(ctx, `SELECT vector FROM paper_vectors`).Scan(&vec))
	require.Equal(t, []byte{0, 0xff, 0x10, 0x20, 0x7f}, vec)
	require.EqualValues(t, 1, count(t, ctx, conn, `SELECT count(*) FROM papers WHERE text_search @@ websearch_to_tsquery('quarry', 'spindle')`), "the generated column was computed")

	// The jobs still to do are River's jobs in the target, at their times.
	var timerArgs string
	var timerAt time.Time
	require.NoError(t, conn.QueryRow(ctx, `SELECT args::text, scheduled_at FROM river_job WHERE kind = 'gate_timer' AND state = 'scheduled'`).Scan(&timerArgs, &timerAt))
	require.JSONEq(t, `{"run_id": "run3", "checkpoint_id": "run3-cp1"}`, timerArgs)
	require.True(t, timerDue.Equal(timerAt), "%v", timerAt)
	var wakeAt time.Time
	require.NoError(t, conn.QueryRow(ctx, `SELECT scheduled_at FROM river_job WHERE kind = 'advance_run' AND state = 'scheduled' AND args->>'run_id' = 'run4'`).Scan(&wakeAt))
	require.True(t, wakeDue.Equal(wakeAt), "%v", wakeAt)
	require.EqualValues(t, 5, count(t, ctx, conn, `SELECT count(*) FROM river_job WHERE kind = 'advance_run' AND state = 'available'`))

	// checkpoints.rowid keeps SQLite's order; sequences continue past the
	// copied keys; the triggers are on again.
	var ids []string
	rows, err := conn.Query(ctx, `SELECT id FROM checkpoints ORDER BY rowid`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"run1-cp1", "run2-cp1", "run3-cp1"}, ids)
	maxDoc := count(t, ctx, conn, `SELECT max(docid) FROM papers`)
	logBefore := count(t, ctx, conn, `SELECT max(seq) FROM library_log`)
	var docid int64
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO papers (id, title, imported_at) VALUES ('new', 'New', 'now') RETURNING docid`).Scan(&docid))
	require.Equal(t, maxDoc+1, docid)
	require.Equal(t, logBefore+1, count(t, ctx, conn, `SELECT max(seq) FROM library_log`), "the insert trigger logged the new paper")
	require.Equal(t, int64(1), count(t, ctx, conn, `SELECT count(*) FROM library_log WHERE docid = $1`, docid))
	var rowid int64
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO checkpoints (id, run_id, step, kind, payload, iteration, status, created_at) VALUES ('c-new', 'run1', 's', 'k', '{}', 1, 'pending', 'now') RETURNING rowid`).Scan(&rowid))
	require.Greater(t, rowid, int64(3))
	require.EqualValues(t, 1, count(t, ctx, conn, `SELECT count(*) FROM river_migration WHERE line = 'main' AND version = (SELECT max(version) FROM river_migration)`), "River's tables exist")
	require.Equal(t, rep.Version, count(t, ctx, conn, `SELECT max(version_id) FROM goose_db_version`))

	// The indexes dropped for the load came back as the migrations made
	// them.
	ref := pg.NewDatabase(t)
	fsys, err := migrations.Postgres()
	require.NoError(t, err)
	refDB, err := sql.Open("pgx", ref)
	require.NoError(t, err)
	defer refDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, refDB, fsys)
	require.NoError(t, err)
	_, err = p.Up(ctx)
	require.NoError(t, err)
	rc, err := pgx.Connect(ctx, ref)
	require.NoError(t, err)
	defer rc.Close(ctx)
	require.Equal(t, indexes(t, ctx, rc), indexes(t, ctx, conn))
}

func indexes(t *testing.T, ctx context.Context, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename NOT LIKE 'river%' ORDER BY indexname`)
	require.NoError(t, err)
	defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, defs)
	return defs
}

// A second copy into the same database is refused, naming what it found,
// and writes nothing.
func TestCopyRefusesNonEmptyTarget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	src := openSource(t, seeded(t))
	_, err := dbcopy.Copy(ctx, src, url, dbcopy.Options{})
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	migrated := `SELECT (SELECT count(*) FROM goose_db_version) + (SELECT count(*) FROM river_migration)`
	before := count(t, ctx, conn, migrated)

	_, err = dbcopy.Copy(ctx, src, url, dbcopy.Options{})
	require.Error(t, err)
	require.Equal(t, fault.EConflict, fault.ErrorCode(err))
	require.Contains(t, err.Error(), "not empty")
	require.Contains(t, err.Error(), "public.accounts")
	require.Contains(t, err.Error(), "nothing was written")
	require.EqualValues(t, 303, count(t, ctx, conn, `SELECT count(*) FROM papers`))
	require.Equal(t, before, count(t, ctx, conn, migrated), "no migration ran again")

	other := pg.NewDatabase(t)
	oc, err := pgx.Connect(ctx, other)
	require.NoError(t, err)
	defer oc.Close(ctx)
	_, err = oc.Exec(ctx, `CREATE TABLE notes (id int)`)
	require.NoError(t, err)
	_, err = dbcopy.Copy(ctx, src, other, dbcopy.Options{})
	require.ErrorContains(t, err, "public.notes")
	require.EqualValues(t, 1, count(t, ctx, oc, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`), "nothing was created")
}

// A source that the current quarry has not migrated yet is refused.
func TestCopyRefusesOlderSource(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := seeded(t)
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	url := pg.NewDatabase(t)

	_, err = dbcopy.Copy(ctx, openSource(t, path), url, dbcopy.Options{})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "start this quarry once on it")
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.Zero(t, count(t, ctx, conn, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`))
}

// A value PostgreSQL cannot store fails the copy naming it, and no row
// is written (one transaction).
func TestCopyFailsWhole(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := seeded(t)
	raw, err := store.OpenRaw(path, "OFF")
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `INSERT INTO papers (id, title, imported_at) VALUES ('nul', 'a' || char(0) || 'b', 'x')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	url := pg.NewDatabase(t)

	_, err = dbcopy.Copy(ctx, openSource(t, path), url, dbcopy.Options{})
	require.ErrorContains(t, err, "papers.title")
	require.ErrorContains(t, err, "NUL byte")
	require.ErrorContains(t, err, "drop and recreate it")
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.Zero(t, count(t, ctx, conn, `SELECT count(*) FROM accounts`))
	require.Zero(t, count(t, ctx, conn, `SELECT count(*) FROM papers`))
	require.EqualValues(t, 1, count(t, ctx, conn, `SELECT count(*) FROM vector_generation`), "the migration's row is back")
}

// Verify finds a row changed after the copy, in that table only.
func TestVerifyFindsCorruption(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pg.NewDatabase(t)
	src := openSource(t, seeded(t))
	_, err := dbcopy.Copy(ctx, src, url, dbcopy.Options{})
	require.NoError(t, err)
	rep, err := dbcopy.Verify(ctx, src, url)
	require.NoError(t, err)
	require.Empty(t, rep.Mismatched())

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `UPDATE paper_marks SET note = note || '.' WHERE seq = (SELECT min(seq) FROM paper_marks)`)
	require.NoError(t, err)
	rep, err = dbcopy.Verify(ctx, src, url)
	require.Error(t, err)
	require.Equal(t, []string{"paper_marks"}, rep.Mismatched())
	for _, tr := range rep.Tables {
		if tr.Name == "paper_marks" {
			require.Equal(t, tr.Rows, tr.TargetRows, "same count, different checksum")
			require.NotEqual(t, tr.Checksum, tr.TargetChecksum)
		}
	}
	require.True(t, strings.Contains(err.Error(), "paper_marks"))
}
