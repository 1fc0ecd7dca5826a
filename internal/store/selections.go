package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"quarry/internal/fault"
	"quarry/internal/research"
)

// A project's library selection is the papers of the installation's
// library the project works with (project_papers): a search run of the
// project may search only them (research.WithLibrarySelection), and the
// library page can list and search them. The library itself keeps one
// copy of each paper, whichever projects selected it.

// maxSelectionChange bounds the papers one call adds or removes, so a
// request cannot hold the writer for long; an import adds its papers in
// chunks of it.
const maxSelectionChange = 5000

// SelectPapers adds the library papers ids to project's selection,
// recording who added them, and returns how many were not selected
// before. IDs no library paper has are skipped (a paper must be in the
// library to be selected). More than maxSelectionChange IDs are added in
// several transactions, each whole.
func (s *Store) SelectPapers(ctx context.Context, project, by string, ids []string) (int, error) {
	added := 0
	for len(ids) > 0 {
		n := min(len(ids), maxSelectionChange)
		list, err := json.Marshal(ids[:n])
		if err != nil {
			return added, fmt.Errorf("store: select papers: %w", err)
		}
		res, err := s.write.ExecContext(ctx, `INSERT INTO project_papers (project_id, paper_id, added_by, added_at)
			SELECT ?1, p.id, ?2, ?3 FROM papers p WHERE p.id IN `+s.write.d.jsonTexts("?4")+`
			AND EXISTS (SELECT 1 FROM projects WHERE id = ?1)
			ON CONFLICT (project_id, paper_id) DO NOTHING`, project, by, formatTime(s.Now()), string(list))
		if err != nil {
			return added, fmt.Errorf("store: select papers: %w", err)
		}
		k, _ := res.RowsAffected()
		added += int(k)
		ids = ids[n:]
	}
	return added, nil
}

// UnselectPapers removes ids from project's selection (the papers stay in
// the library) and returns how many were selected. At most
// maxSelectionChange at once: a larger list is EInvalid.
func (s *Store) UnselectPapers(ctx context.Context, project string, ids []string) (int, error) {
	if len(ids) > maxSelectionChange {
		return 0, fault.Errorf(fault.EInvalid, "remove at most %d papers from a selection at once, not %d", maxSelectionChange, len(ids))
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, fmt.Errorf("store: unselect papers: %w", err)
	}
	res, err := s.write.ExecContext(ctx, `DELETE FROM project_papers WHERE project_id = ? AND paper_id IN `+s.write.d.jsonTexts("?"), project, string(list))
	if err != nil {
		return 0, fmt.Errorf("store: unselect papers: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// SelectionCount is how many library papers project's selection holds.
func (s *Store) SelectionCount(ctx context.Context, project string) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM project_papers s JOIN papers p ON p.id = s.paper_id
		WHERE s.project_id = ?`, project).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: selection count: %w", err)
	}
	return n, nil
}

// SelectedIn returns which of projects have the paper id in their
// selection, in the order given.
func (s *Store) SelectedIn(ctx context.Context, id string, projects []string) ([]string, error) {
	out := []string{}
	for _, p := range projects {
		var one int
		err := s.read.QueryRowContext(ctx, `SELECT 1 FROM project_papers WHERE project_id = ? AND paper_id = ?`, p, id).Scan(&one)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return nil, fmt.Errorf("store: paper selections: %w", err)
		default:
			out = append(out, p)
		}
	}
	return out, nil
}

// selectionOf returns the library docids of ctx's selection
// (research.LibrarySelection), or nil when ctx searches the whole library.
func (s *Store) selectionOf(ctx context.Context) (map[int64]struct{}, error) {
	project := research.LibrarySelection(ctx)
	if project == "" {
		return nil, nil
	}
	return s.SelectionDocs(ctx, project)
}

// SelectionDocs returns the library docids of project's selection: the
// semantic ranking keeps only them (library.Semantic).
func (s *Store) SelectionDocs(ctx context.Context, project string) (map[int64]struct{}, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT p.docid FROM project_papers s JOIN papers p ON p.id = s.paper_id WHERE s.project_id = ?`, project)
	if err != nil {
		return nil, fmt.Errorf("store: selection: %w", err)
	}
	defer rows.Close()
	docs := map[int64]struct{}{}
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("store: selection: %w", err)
		}
		docs[d] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: selection: %w", err)
	}
	return docs, nil
}

// both keeps what a and b keep (nil keeps everything).
func both(a, b func(int64) bool) func(int64) bool {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(d int64) bool { return a(d) && b(d) }
}

// within is the filter that keeps the docids of sel (nil: no filter).
func within(sel map[int64]struct{}) func(int64) bool {
	if sel == nil {
		return nil
	}
	return func(d int64) bool { _, ok := sel[d]; return ok }
}

// SelectMatching adds to project's selection every library paper matching
// text as the library page searches it (every word, BrowseLibrary), and
// returns how many were added and how many matched. More than max matches
// is EInvalid, with nothing added: a selection grows by a reviewed search,
// not by the whole library at once.
func (s *Store) SelectMatching(ctx context.Context, project, by, text string, max int) (added, matched int, err error) {
	match := wordsMatch(text)
	if match == "" {
		return 0, 0, fault.Errorf(fault.EInvalid, "type the words the papers to add must have")
	}
	hits, total, err := s.rankLibrary(ctx, match, libraryWeights, research.YearRange{}, 0, max)
	if err != nil {
		return 0, 0, err
	}
	if total > max {
		return 0, total, fault.Errorf(fault.EInvalid, "%d papers match; narrow the search to at most %d before adding them to the selection", total, max)
	}
	list, err := json.Marshal(docidsOf(hits))
	if err != nil {
		return 0, total, fmt.Errorf("store: select matching: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM papers WHERE docid IN `+s.read.d.jsonInts("?"), string(list))
	if err != nil {
		return 0, total, fmt.Errorf("store: select matching: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, total, fmt.Errorf("store: select matching: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, total, fmt.Errorf("store: select matching: %w", err)
	}
	added, err = s.SelectPapers(ctx, project, by, ids)
	return added, total, err
}
