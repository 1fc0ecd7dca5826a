package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// notes says what the copy leaves behind on purpose, and how River's
// jobs crossed over (requeued, requeueJobs' summary). Run files are rows
// of run_files and travel with the tables; the only files on disk are
// the SQLite backups listed in backups.
func notes(ctx context.Context, src *sql.Tx, requeued string) ([]string, error) {
	var out []string
	jobs, err := riverJobs(ctx, src, `SELECT state, count(*) FROM river_job GROUP BY state ORDER BY state`)
	if err != nil {
		return nil, err
	}
	if jobs != "" {
		n := "River's job table was not copied (" + jobs + ")"
		if requeued != "" {
			n += "; the unfinished jobs were queued again in PostgreSQL, each at its time (" + requeued + "): gate timers, delayed advances, queued runs"
		}
		out = append(out, n)
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
	if ok, err := hasRiver(ctx, src); err != nil || !ok {
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
