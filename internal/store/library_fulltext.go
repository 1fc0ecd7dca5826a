package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"quarry/internal/research"
	"quarry/internal/textindex"
)

// The library's full-text index lives in each process's memory
// (internal/textindex: FTS5's tokenizer, matches and bm25, several times
// faster). It follows the papers table through library_log (see
// migrations/00023_library_log.sql): every write to a paper's indexed text
// logs its docid in the writer's transaction, and before a search the
// index re-reads the papers logged since the last entry it applied. So a
// paper is searchable once its write commits, whichever process wrote it.

// indexColumns are the papers columns the index holds, in column order:
// the ranking weights below are given in this order.
const indexColumns = `p.title, p.abstract, p.authors, p.venue, coalesce(p.compounds, '')`

// libraryWeights are bm25's column weights for a search of the library
// (title, abstract, authors, venue, compounds): a term in the title says
// more about what a paper is about than the same term in its abstract; a
// joined hyphenated compound (research.Compounds) weighs like an abstract
// word.
var libraryWeights = []float64{10, 3, 1, 1, 3}

// logKeep is how many library_log entries a prune leaves: an index that
// has fallen further behind (a process that slept through a large import)
// rebuilds from the papers table, which costs about what replaying them
// would.
const logKeep = 50_000

// fulltext is the store's index and how far it has followed library_log.
type fulltext struct {
	follow  sync.Mutex // one catch-up at a time
	current atomic.Pointer[libraryIndex]
	// behind is set while a catch-up started by followLibraryIndex runs.
	behind atomic.Bool
}

// libraryIndex is one built index: the text index, each paper's year (a
// year range filters the matches before they are ranked), and the last
// library_log entry applied.
type libraryIndex struct {
	ix *textindex.Index
	mu sync.RWMutex // guards years
	// years holds each indexed paper's year (0: unknown).
	years map[int64]int32
	seq   atomic.Int64
}

// inYears returns the filter that keeps papers inside years (and those of
// unknown year, as research.YearRange.Contains does), nil for no range.
// The caller holds li.mu for reading while it is used.
func (li *libraryIndex) inYears(years research.YearRange) func(int64) bool {
	if years == (research.YearRange{}) {
		return nil
	}
	return func(doc int64) bool {
		y := int(li.years[doc])
		return y == 0 || ((years.From == 0 || y >= years.From) && (years.To == 0 || y <= years.To))
	}
}

// WarmLibraryIndex builds the library's full-text index now rather than
// at the first search: the server calls it as it starts, so no researcher
// waits for it (seconds for 10^5 papers).
func (s *Store) WarmLibraryIndex(ctx context.Context) error {
	if s.tsRanking {
		return nil // PostgreSQL ranks; there is no index to build
	}
	_, err := s.libraryIndex(ctx)
	return err
}

// SyncLibraryIndex brings the index up to date with what has been written
// if this process has built one, so papers an import just wrote are
// searchable at once; a process that has not searched (`quarry import`)
// builds nothing.
func (s *Store) SyncLibraryIndex(ctx context.Context) error {
	if s.tsRanking || s.fulltext.current.Load() == nil {
		return nil
	}
	_, err := s.libraryIndex(ctx)
	return err
}

// followLibraryIndex starts catching this process's index up in the
// background, if it has one and no catch-up is under way: a bulk import
// calls it after each batch it commits, so the index tokenizes on the
// other core while SQLite writes the next batch, and is nearly up to date
// when the import ends.
func (s *Store) followLibraryIndex() {
	if s.fulltext.current.Load() == nil || !s.fulltext.behind.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.fulltext.behind.Store(false)
		if err := s.SyncLibraryIndex(context.Background()); err != nil {
			s.log.Debug("store: library index: catching up during an import", "err", err)
		}
	}()
}

// libraryIndex returns the index, built or caught up with library_log.
func (s *Store) libraryIndex(ctx context.Context) (*libraryIndex, error) {
	head, _, err := s.libraryLogBounds(ctx)
	if err != nil {
		return nil, err
	}
	if li := s.fulltext.current.Load(); li != nil && li.seq.Load() >= head {
		return li, nil
	}
	ft := &s.fulltext
	ft.follow.Lock()
	defer ft.follow.Unlock()
	li := ft.current.Load()
	if li != nil && li.seq.Load() >= head {
		return li, nil
	}
	// Read the log's head again under the lock: another follower may
	// have applied more than this caller saw.
	head, oldest, err := s.libraryLogBounds(ctx)
	if err != nil {
		return nil, err
	}
	if li == nil || li.seq.Load() < oldest-1 || head-li.seq.Load() > int64(max(logKeep, li.ix.Len()/2)) {
		built, err := s.buildLibraryIndex(ctx, head)
		if err != nil {
			return nil, err
		}
		ft.current.Store(built)
		return built, nil
	}
	if err := s.applyLibraryLog(ctx, li, head); err != nil {
		return nil, err
	}
	return li, nil
}

// libraryLogBounds returns library_log's newest and oldest seq (0 when it
// is empty). Each is a lookup at one end of the primary key: asked
// together in one aggregate, SQLite would scan the table.
func (s *Store) libraryLogBounds(ctx context.Context) (head, oldest int64, err error) {
	if err := s.read.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM library_log), 0), coalesce((SELECT min(seq) FROM library_log), 0)`).
		Scan(&head, &oldest); err != nil {
		return 0, 0, fmt.Errorf("store: library index: read the log: %w", err)
	}
	return head, oldest, nil
}

// buildLibraryIndex indexes every paper, tokenizing on every core. head
// is the log's newest entry, read before the papers: a write committed
// meanwhile is logged after it and applied by the next catch-up (applying
// a paper twice is harmless).
func (s *Store) buildLibraryIndex(ctx context.Context, head int64) (*libraryIndex, error) {
	ix, err := textindex.New(len(libraryWeights), textindex.Tokenize)
	if err != nil {
		return nil, err
	}
	li := &libraryIndex{ix: ix, years: map[int64]int32{}}
	rows, err := s.read.QueryContext(ctx, `SELECT p.docid, p.year, `+indexColumns+` FROM papers p ORDER BY p.docid`)
	if err != nil {
		return nil, fmt.Errorf("store: build the library index: %w", err)
	}
	defer rows.Close()
	if err := ix.AddAll(indexRows(rows, li.years)); err != nil {
		return nil, fmt.Errorf("store: build the library index: %w", err)
	}
	// Built on every core; later changes are tokenized on one, beside
	// the import or the requests that made them.
	ix.SetWorkers(1)
	li.seq.Store(head)
	s.log.Debug("store: built the library index", "papers", ix.Len(), "tokens", ix.Tokens())
	return li, nil
}

// indexRows reads rows of docid, year and indexColumns as the index's
// rows, noting each paper's year in years (the caller holds what guards
// it).
func indexRows(rows *sql.Rows, years map[int64]int32) func() (textindex.Doc, error) {
	return func() (textindex.Doc, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return textindex.Doc{}, err
			}
			return textindex.Doc{}, io.EOF
		}
		var d textindex.Doc
		var year int32
		var title, abstract, authors, venue, compounds string
		if err := rows.Scan(&d.ID, &year, &title, &abstract, &authors, &venue, &compounds); err != nil {
			return d, err
		}
		d.Cols = []string{title, abstract, authors, venue, compounds}
		years[d.ID] = year
		return d, nil
	}
}

// applyLibraryLog re-reads the papers logged after li's last entry up to
// head and replaces their rows in the index; a paper no longer stored
// leaves it.
func (s *Store) applyLibraryLog(ctx context.Context, li *libraryIndex, head int64) error {
	from := li.seq.Load()
	rows, err := s.read.QueryContext(ctx, `SELECT DISTINCT docid FROM library_log WHERE seq > ? AND seq <= ?`, from, head)
	if err != nil {
		return fmt.Errorf("store: library index: read the log: %w", err)
	}
	var docs []int64
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return fmt.Errorf("store: library index: read the log: %w", err)
		}
		docs = append(docs, d)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("store: library index: read the log: %w", err)
	}
	list, err := json.Marshal(docs)
	if err != nil {
		return err
	}
	papers, err := s.read.QueryContext(ctx, `SELECT p.docid, p.year, `+indexColumns+` FROM papers p
		WHERE p.docid IN `+s.read.d.jsonInts("?")+` ORDER BY p.docid`, string(list))
	if err != nil {
		return fmt.Errorf("store: library index: read changed papers: %w", err)
	}
	defer papers.Close()
	years := map[int64]int32{}
	if err := li.ix.AddAll(indexRows(papers, years)); err != nil {
		return fmt.Errorf("store: library index: %w", err)
	}
	li.mu.Lock()
	for _, d := range docs {
		if y, ok := years[d]; ok {
			li.years[d] = y
			continue
		}
		delete(li.years, d)
		li.ix.Delete(d)
	}
	li.mu.Unlock()
	li.seq.Store(head)
	return nil
}

// pruneLibraryLog deletes all but the newest logKeep entries of
// library_log, inside a writer's transaction.
func pruneLibraryLog(ctx context.Context, tx *tx) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM library_log WHERE seq <= (SELECT max(seq) FROM library_log) - ?`, logKeep); err != nil {
		return fmt.Errorf("store: prune the library log: %w", err)
	}
	return nil
}
