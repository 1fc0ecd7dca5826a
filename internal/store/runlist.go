package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
)

// RunFilter chooses a page of ListRuns.
type RunFilter struct {
	// Status keeps runs in this status ("" for every status).
	Status engine.Status
	// TextParam names the run parameter shown as a run's text and
	// searched by Text (the search workflow's "question"); the store
	// knows no workflow's parameters.
	TextParam string
	// Text keeps runs whose TextParam contains it, ignoring case (ASCII
	// letters only: SQLite's LIKE folds no other case). "" keeps all.
	Text string
	// Projects keeps the runs of these projects: nil keeps every run
	// (an installation without accounts, an admin), an empty list none
	// (an account in no project).
	Projects []string
	// Offset and Limit pick the page, newest first.
	Offset, Limit int
}

// RunListItem is one run of a list: what a line shows, without its state.
type RunListItem struct {
	ID        string
	Workflow  string
	Text      string // the TextParam's value ("" when the run has none)
	Status    engine.Status
	Iteration int
	CreatedAt time.Time
	// Papers counts the papers the run showed for review (run_papers).
	Papers int
	// CheckpointID is the checkpoint the run waits at (""), Project and
	// StartedBy its project and starter (engine.Run's).
	CheckpointID, Project, StartedBy string
}

// RunList is a page of runs and how many match in all.
type RunList struct {
	Runs  []RunListItem
	Total int
}

// MaxListLimit bounds a page of a list.
const MaxListLimit = 200

// ListRuns returns a page of the server's runs matching f, newest first,
// and how many match, from one read transaction so the two agree. It reads
// no run's state: the paper count comes from run_papers.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) (RunList, error) {
	if f.Limit <= 0 || f.Limit > MaxListLimit {
		return RunList{}, fault.Errorf(fault.EInvalid, "a page of runs holds 1 to %d runs, not %d", MaxListLimit, f.Limit)
	}
	if f.Offset < 0 {
		return RunList{}, fault.Errorf(fault.EInvalid, "the offset must not be negative")
	}
	path, err := paramPath(s.read.d, f.TextParam)
	if err != nil {
		return RunList{}, err
	}
	like := ""
	if t := strings.TrimSpace(f.Text); t != "" {
		like = "%" + escapeLike(t) + "%"
	}
	projects, err := projectsArg(f.Projects)
	if err != nil {
		return RunList{}, err
	}
	d := s.read.d
	where := `WHERE (?1 = '' OR r.status = ?1) AND (?2 = '' OR coalesce(` + d.jsonField("r.params", "?3") + `, '') ` + d.like() + ` ?2 ESCAPE '\')
		AND (CAST(?4 AS text) IS NULL OR r.project_id IN ` + s.read.d.jsonTexts("?4") + `)`
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return RunList{}, fmt.Errorf("store: list runs: %w", err)
	}
	defer tx.Rollback()
	var out RunList
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs r `+where, string(f.Status), like, path, projects).Scan(&out.Total); err != nil {
		return RunList{}, fmt.Errorf("store: count runs: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.workflow, coalesce(`+d.jsonField("r.params", "?3")+`, ''), r.status, r.iteration, r.created_at,
		(SELECT count(*) FROM run_papers rp WHERE rp.run_id = r.id), coalesce(r.checkpoint_id, ''), r.project_id, r.started_by
		FROM runs r `+where+` ORDER BY r.created_at DESC, r.id DESC LIMIT ?5 OFFSET ?6`,
		string(f.Status), like, path, projects, f.Limit, f.Offset)
	if err != nil {
		return RunList{}, fmt.Errorf("store: list runs: %w", err)
	}
	defer rows.Close()
	out.Runs = []RunListItem{}
	for rows.Next() {
		var r RunListItem
		var text any
		var status, created string
		if err := rows.Scan(&r.ID, &r.Workflow, &text, &status, &r.Iteration, &created, &r.Papers, &r.CheckpointID, &r.Project, &r.StartedBy); err != nil {
			return RunList{}, fmt.Errorf("store: list runs: %w", err)
		}
		r.Text, r.Status, r.CreatedAt = textValue(text), engine.Status(status), parseTime(created)
		out.Runs = append(out.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return RunList{}, fmt.Errorf("store: list runs: %w", err)
	}
	return out, nil
}

// projectsArg binds a filter by projects: NULL for none (every run), else
// a JSON array for json_each ("[]" keeps no run).
func projectsArg(projects []string) (any, error) {
	if projects == nil {
		return nil, nil
	}
	b, err := json.Marshal(projects)
	if err != nil {
		return nil, fmt.Errorf("store: projects filter: %w", err)
	}
	return string(b), nil
}

// escapeLike escapes LIKE's wildcards (with ESCAPE '\'), so a search for
// "50%" finds the text "50%" and not everything starting with "50".
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// paramPath is the key parameter of a top-level run parameter, for the
// dialect's jsonField (a JSON path on SQLite).
func paramPath(d dialect, name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `"\.[]$`) {
		return "", fault.Errorf(fault.EInvalid, "%q cannot name a run parameter", name)
	}
	return d.jsonKey(name), nil
}

// atMostOne is true when the JSON value of the top-level key bound at
// param in the JSON text expr is absent, null, a boolean or a number up to
// 1, as SQLite reads coalesce(json_extract(expr, param), 1) <= 1 (text
// sorts above numbers there, so a string or object is not).
func atMostOne(d dialect, expr, param string) string {
	if d.kind == dialectPostgres {
		v := "(CAST(" + expr + " AS jsonb) -> CAST(" + param + " AS text))"
		return "(CASE jsonb_typeof(" + v + ") WHEN 'number' THEN CAST(" + v + " AS numeric) <= 1 WHEN 'string' THEN false WHEN 'object' THEN false WHEN 'array' THEN false ELSE true END)"
	}
	return "coalesce(json_extract(" + expr + ", " + param + "), 1) <= 1"
}

// textValue is a parameter's value as text (json_extract gives a number
// for a number).
func textValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// PaperRun is a run a paper appeared in, with the paper's current mark
// there (nil when it was not marked).
type PaperRun struct {
	RunListItem
	// FirstIteration is the first review that showed the paper.
	FirstIteration int
	Mark           *research.Mark
}

// PaperRunsFilter chooses PaperRuns' runs.
type PaperRunsFilter struct {
	PaperID string
	// TextParam names the run parameter shown as a run's text (see
	// RunFilter.TextParam).
	TextParam string
	// Projects keeps runs of these projects (nil: every run; empty: none),
	// so nobody learns of another project's runs through a paper.
	Projects []string
	// BlindParam names a run parameter that, above 1, marks a run whose
	// screening is blind (several screeners a paper): its marks are left
	// out, since the latest may be a reviewer's mark of a paper still
	// being screened. "" for none.
	BlindParam string
	Limit      int
}

// PaperRuns returns the runs that showed paper f.PaperID for review, newest
// first, at most limit of them, and how many there are; textParam is as in
// RunFilter. It reads run_papers and each run's newest mark of the paper,
// never a run's state.
func (s *Store) PaperRuns(ctx context.Context, f PaperRunsFilter) ([]PaperRun, int, error) {
	paperID, limit := f.PaperID, f.Limit
	if limit <= 0 || limit > MaxListLimit {
		return nil, 0, fault.Errorf(fault.EInvalid, "a page of runs holds 1 to %d runs, not %d", MaxListLimit, limit)
	}
	path, err := paramPath(s.read.d, f.TextParam)
	if err != nil {
		return nil, 0, err
	}
	blind := s.read.d.jsonKey("__none__")
	if f.BlindParam != "" {
		if blind, err = paramPath(s.read.d, f.BlindParam); err != nil {
			return nil, 0, err
		}
	}
	projects, err := projectsArg(f.Projects)
	if err != nil {
		return nil, 0, err
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("store: paper runs: %w", err)
	}
	defer tx.Rollback()
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM run_papers rp JOIN runs r ON r.id = rp.run_id
		WHERE rp.paper_id = ?1 AND (CAST(?2 AS text) IS NULL OR r.project_id IN `+tx.d.jsonTexts("?2")+`)`, paperID, projects).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: paper runs: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.workflow, coalesce(`+tx.d.jsonField("r.params", "?2")+`, ''), r.status, r.iteration, r.created_at,
		(SELECT count(*) FROM run_papers x WHERE x.run_id = r.id), rp.iteration,
		m.mark, m.note, m.reason, m.marked_by, m.marked_at, m.iteration
		FROM run_papers rp JOIN runs r ON r.id = rp.run_id
		LEFT JOIN paper_marks m ON m.seq = (SELECT MAX(seq) FROM paper_marks WHERE run_id = rp.run_id AND paper_id = rp.paper_id)
			AND `+atMostOne(tx.d, "r.params", "?5")+`
		WHERE rp.paper_id = ?1 AND (CAST(?4 AS text) IS NULL OR r.project_id IN `+tx.d.jsonTexts("?4")+`)
		ORDER BY r.created_at DESC, r.id DESC LIMIT ?3`, paperID, path, limit, projects, blind)
	if err != nil {
		return nil, 0, fmt.Errorf("store: paper runs: %w", err)
	}
	defer rows.Close()
	out := []PaperRun{}
	for rows.Next() {
		var pr PaperRun
		var text any
		var status, created string
		var mark, note, reason, by, at sql.NullString
		var markIter sql.NullInt64
		if err := rows.Scan(&pr.ID, &pr.Workflow, &text, &status, &pr.Iteration, &created, &pr.Papers, &pr.FirstIteration,
			&mark, &note, &reason, &by, &at, &markIter); err != nil {
			return nil, 0, fmt.Errorf("store: paper runs: %w", err)
		}
		pr.Text, pr.Status, pr.CreatedAt = textValue(text), engine.Status(status), parseTime(created)
		if mark.Valid {
			pr.Mark = &research.Mark{PaperID: paperID, Mark: mark.String, Note: note.String, Reason: reason.String,
				By: by.String, At: parseTime(at.String), Iteration: int(markIter.Int64)}
		}
		out = append(out, pr)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: paper runs: %w", err)
	}
	return out, total, nil
}
