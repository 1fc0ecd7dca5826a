package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", the driver the store will use for PostgreSQL
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/pgtest"
	"quarry/migrations"
)

// pg is the test binary's throwaway PostgreSQL server (internal/pgtest),
// started by the first test that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// openPostgres returns a handle of the postgres dialect on a new database
// with Quarry's PostgreSQL schema.
func openPostgres(t *testing.T) *db {
	t.Helper()
	raw, err := sql.Open("pgx", pg.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	fsys, err := migrations.Postgres()
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectPostgres, raw, fsys)
	require.NoError(t, err)
	_, err = p.Up(t.Context())
	require.NoError(t, err)
	return &db{DB: raw, d: postgresDialect(), writer: true}
}

// TestPostgresDialectSmoke runs store statements that are meant to be
// portable through the postgres dialect's handles, on the PostgreSQL
// schema: the real helpers where they run alone, else their SQL.
func TestPostgresDialectSmoke(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	h := openPostgres(t)
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

	for _, c := range []struct {
		table, column string
		want          bool
	}{{"papers", "compounds", true}, {"backups", "size", true}, {"papers", "nothing", false}, {"nothing", "", false}} {
		var ok bool
		var err error
		if c.column == "" {
			ok, err = h.hasTable(ctx, c.table)
		} else {
			ok, err = h.hasColumn(ctx, c.table, c.column)
		}
		require.NoError(t, err)
		require.Equal(t, c.want, ok, "%s.%s", c.table, c.column)
	}
	ok, err := h.hasTable(ctx, "import_staging")
	require.NoError(t, err)
	require.True(t, ok)

	tx, err := h.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	require.NoError(t, insertRun(ctx, tx, engine.Run{ID: "r1", Workflow: "w", Status: engine.StatusWaiting,
		State: engine.State{"a": json.RawMessage(`1`)}, CreatedAt: now, UpdatedAt: now}))
	src := engine.Source{Hash: "h1", Name: "w", Version: 1, File: "w.yaml", Text: "steps: []"}
	// ON CONFLICT DO NOTHING: the second insert of one source is no error.
	require.NoError(t, insertSource(ctx, tx, src, now))
	require.NoError(t, insertSource(ctx, tx, src, now))
	require.NoError(t, insertCheckpoint(ctx, tx, engine.Checkpoint{ID: "cp1", RunID: "r1", Step: "review", Kind: "review", Iteration: 1, Timestamp: now}))
	// ON CONFLICT (key) DO UPDATE: the second state replaces the first.
	require.NoError(t, insertCheckpointState(ctx, tx, "cp1", engine.State{"a": json.RawMessage(`1`)}))
	require.NoError(t, insertCheckpointState(ctx, tx, "cp1", engine.State{"a": json.RawMessage(`2`)}))
	// RETURNING in place of LastInsertId. SaveMarks binds Resolves, a Go
	// bool, which pgx refuses for a BIGINT column: the port's to settle.
	var seqs []int64
	for _, paper := range []string{"p1", "p2"} {
		var seq int64
		require.NoError(t, tx.QueryRowContext(ctx, insertMarkSQL, "r1", paper, "cp1", 1, "relevant", "", "", "ada", formatTime(now), 0).Scan(&seq))
		seqs = append(seqs, seq)
	}
	require.Less(t, seqs[0], seqs[1])
	// A prepared ON CONFLICT DO NOTHING, and a read-back of a JSON list.
	require.NoError(t, insertRunPapers(ctx, tx, "r1", 1, []string{"p1", "p2", "p1"}))
	require.NoError(t, tx.Commit())

	var n int
	require.NoError(t, h.QueryRowContext(ctx, `SELECT count(*) FROM workflow_sources WHERE hash = ?`, "h1").Scan(&n))
	require.Equal(t, 1, n)
	var state string
	require.NoError(t, h.QueryRowContext(ctx, `SELECT state FROM checkpoint_states WHERE checkpoint_id = ?`, "cp1").Scan(&state))
	require.JSONEq(t, `{"a": 2}`, state)
	require.NoError(t, h.QueryRowContext(ctx, `SELECT count(*) FROM paper_marks WHERE seq >= ? AND run_id = ? AND checkpoint_id = ?`, seqs[0], "r1", "cp1").Scan(&n))
	require.Equal(t, 2, n)

	// ?N placeholders, reused and out of order, in a prepared upsert.
	var doc int64
	require.NoError(t, h.QueryRowContext(ctx, `INSERT INTO papers (id, title, abstract, imported_at) VALUES (?, ?, ?, ?) RETURNING docid`,
		"p1", "A title", "An abstract", formatTime(now)).Scan(&doc))
	tx, err = h.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	put, err := tx.PrepareContext(ctx, putVectorSQL)
	require.NoError(t, err)
	defer put.Close()
	for _, v := range [][]float32{{1, 2}, {1, 2, 3}} {
		res, err := put.ExecContext(ctx, "m", doc, len(v), encodeVector(v), "A title", "An abstract")
		require.NoError(t, err)
		affected, err := res.RowsAffected()
		require.NoError(t, err)
		require.EqualValues(t, 1, affected)
	}
	res, err := put.ExecContext(ctx, "m", doc, 1, encodeVector([]float32{9}), "Another title", "An abstract")
	require.NoError(t, err)
	affected, err := res.RowsAffected()
	require.NoError(t, err)
	require.Zero(t, affected, "a changed title keeps the vector out")
	require.NoError(t, tx.Commit())

	// Index hints dropped: the run's stamp.
	var version, markSeq, branches int64
	require.NoError(t, h.QueryRowContext(ctx, runStampSQL(h.d), "r1").Scan(&version, &markSeq, &branches))
	require.Equal(t, seqs[1], markSeq)
	// A blob of zeros, twice (the upsert).
	for range 2 {
		_, err = h.ExecContext(ctx, writeProbeSQL(h.d), probeBytes)
		require.NoError(t, err)
	}
	require.NoError(t, h.QueryRowContext(ctx, `SELECT length(pad) FROM write_probe WHERE id = 1`).Scan(&n))
	require.Equal(t, probeBytes, n)

	// Seconds since a time (River's job table is not here: a parameter
	// stands for its timestamptz column).
	var secs float64
	require.NoError(t, h.QueryRowContext(ctx, `SELECT COALESCE(`+h.d.secondsSince("CAST(? AS timestamptz)")+`, 0)`, time.Now().Add(-90*time.Second)).Scan(&secs))
	require.InDelta(t, 90, secs, 5)

	// JSON lists as IN subqueries, and a NULL list meaning "any".
	var id string
	require.NoError(t, h.QueryRowContext(ctx, `SELECT id FROM papers WHERE docid IN `+h.d.jsonInts("?"), fmt.Sprintf("[%d, 0]", doc)).Scan(&id))
	require.Equal(t, "p1", id)
	var p2 int64
	require.NoError(t, h.QueryRowContext(ctx, `INSERT INTO papers (id, title, imported_at) VALUES ('p2', 'B', '') RETURNING docid`).Scan(&p2))
	rows, err := h.QueryContext(ctx, `SELECT p.id FROM papers p JOIN `+h.d.jsonIntsTable("?")+` j ON j.value = p.docid ORDER BY j.key`,
		fmt.Sprintf("[%d, %d]", p2, doc))
	require.NoError(t, err)
	var ids []string
	for rows.Next() {
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"p2", "p1"}, ids, "the list's order")
	for _, c := range []struct {
		projects any
		want     int
	}{{nil, 2}, {`[""]`, 2}, {`["other"]`, 0}} {
		require.NoError(t, h.QueryRowContext(ctx, `SELECT count(*) FROM run_papers rp JOIN runs r ON r.id = rp.run_id
			WHERE rp.run_id = ?1 AND (CAST(?2 AS text) IS NULL OR r.project_id IN `+h.d.jsonTexts("?2")+`)`, "r1", c.projects).Scan(&n))
		require.Equal(t, c.want, n, "projects %v", c.projects)
	}

	// JSON fragments: a top-level merge patch, a validity test, a field
	// as text and as JSON.
	var patched string
	require.NoError(t, h.QueryRowContext(ctx, `SELECT `+h.d.jsonPatch("?1", "?2"), `{"a": 1, "b": 2}`, `{"b": null, "c": [3]}`).Scan(&patched))
	require.JSONEq(t, `{"a": 1, "c": [3]}`, patched)
	var changed, valid, invalid bool
	// Parameters cast to text stand for the text columns these read.
	a, b, c := "CAST(?1 AS text)", "CAST(?2 AS text)", "CAST(?3 AS text)"
	require.NoError(t, h.QueryRowContext(ctx, `SELECT `+h.d.jsonChanged(a, b)+`, `+h.d.jsonValid(a)+`, `+h.d.jsonValid(c),
		`{"a": 1}`, `{"a": 1}`, `not json`).Scan(&changed, &valid, &invalid))
	require.False(t, changed)
	require.True(t, valid)
	require.False(t, invalid)
	var field, fieldJSON string
	require.NoError(t, h.QueryRowContext(ctx, `SELECT `+h.d.jsonField("?1", "?2")+`, `+h.d.jsonFieldJSON("?1", "?2"),
		`{"k": "v"}`, h.d.jsonKey("k")).Scan(&field, &fieldJSON))
	require.Equal(t, "v", field)
	require.Equal(t, `"v"`, fieldJSON)

	var dim int
	var vec []byte
	require.NoError(t, h.QueryRowContext(ctx, `SELECT dim, vector FROM paper_vectors WHERE model = ?1 AND docid = ?2`, "m", doc).Scan(&dim, &vec))
	require.Equal(t, 3, dim)
	require.Equal(t, encodeVector([]float32{1, 2, 3}), vec)
}
