package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// notes says what the copy leaves behind on purpose. River's jobs are not
// copied: River's SQLite and PostgreSQL tables differ, and a job is only a
// reminder to act on state that lives in the application tables. The
// engine's Recover, run at every start, schedules again every run left
// pending or running and every open branch; it does not re-arm gate timers
// (their jobs are scheduled for the due time) or a waiting run's delayed
// advance, so unfinished jobs of those kinds get a warning with their
// count. Run files are rows of run_files and travel with the tables; the
// only files on disk are the SQLite backups listed in backups.
func notes(ctx context.Context, src *sql.Tx) ([]string, error) {
	var out []string
	jobs, err := riverJobs(ctx, src, `SELECT state, count(*) FROM river_job GROUP BY state ORDER BY state`)
	if err != nil {
		return nil, err
	}
	if jobs != "" {
		out = append(out, "River's jobs were not copied ("+jobs+"); the engine's recovery at the first start re-enqueues runs left pending or running and open branches")
	}
	unfinished, err := riverJobs(ctx, src, `SELECT kind, count(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded') GROUP BY kind ORDER BY kind`)
	if err != nil {
		return nil, err
	}
	if unfinished != "" {
		var timers int64
		if err := src.QueryRowContext(ctx, `SELECT count(*) FROM gate_timers WHERE status = 'pending'`).Scan(&timers); err != nil {
			return nil, fmt.Errorf("dbcopy: read gate_timers: %w", err)
		}
		out = append(out, fmt.Sprintf("WARNING: unfinished River jobs were dropped (%s; %d gate timer(s) pending): recovery does not re-arm gate timers or a waiting run's delayed advance; check those runs after the first start", unfinished, timers))
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

// riverJobs runs q, a count of the source's River jobs grouped by one
// column, as "3 completed, 1 scheduled" ("" for none or no River table).
func riverJobs(ctx context.Context, src *sql.Tx, q string) (string, error) {
	var exists int
	if err := src.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_list WHERE schema = 'main' AND name = 'river_job'`).Scan(&exists); err != nil || exists == 0 {
		return "", err
	}
	rows, err := src.QueryContext(ctx, q)
	if err != nil {
		return "", fmt.Errorf("dbcopy: read river_job: %w", err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var group string
		var n int64
		if err := rows.Scan(&group, &n); err != nil {
			return "", fmt.Errorf("dbcopy: read river_job: %w", err)
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, group))
	}
	return strings.Join(parts, ", "), rows.Err()
}
