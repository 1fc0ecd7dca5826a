package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// notes says what the copy leaves behind on purpose. River's jobs are not
// copied: River's SQLite and PostgreSQL tables differ, and a job is only a
// reminder to advance a run whose state lives in the application tables;
// the engine's Recover, run at every start, schedules again every run left
// pending or running. Run files are rows of run_files and travel with the
// tables; the only files on disk are the SQLite backups listed in backups.
func notes(ctx context.Context, src *sql.Tx) ([]string, error) {
	var out []string
	jobs, err := riverJobs(ctx, src)
	if err != nil {
		return nil, err
	}
	if jobs != "" {
		out = append(out, "River's jobs were not copied ("+jobs+"); the engine's recovery at the first start re-enqueues runs left pending or running")
	}
	var n int64
	var newest sql.NullString
	if err := src.QueryRowContext(ctx, `SELECT count(*), max(path) FROM backups`).Scan(&n, &newest); err != nil {
		return nil, fmt.Errorf("dbcopy: read backups: %w", err)
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%d backup(s) listed in table backups are SQLite files on disk (e.g. %s): their rows were copied, the files stay where they are and only a SQLite quarry can restore them", n, newest.String))
	}
	return out, nil
}

// riverJobs summarises the source's River jobs by state ("" for none).
func riverJobs(ctx context.Context, src *sql.Tx) (string, error) {
	var exists int
	if err := src.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_list WHERE schema = 'main' AND name = 'river_job'`).Scan(&exists); err != nil || exists == 0 {
		return "", err
	}
	rows, err := src.QueryContext(ctx, `SELECT state, count(*) FROM river_job GROUP BY state ORDER BY state`)
	if err != nil {
		return "", fmt.Errorf("dbcopy: read river_job: %w", err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return "", fmt.Errorf("dbcopy: read river_job: %w", err)
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, state))
	}
	return strings.Join(parts, ", "), rows.Err()
}
