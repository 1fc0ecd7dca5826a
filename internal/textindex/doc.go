// Package textindex is the local library's full-text index: an in-memory
// inverted index in pure Go that answers the FTS5 MATCH expressions the
// query and store packages write (quoted phrases, AND, OR, NOT,
// parentheses, implicit AND) with the same matches, the same bm25 scores
// and the same order as SQLite FTS5, so ranking quality is unchanged.
//
// It exists because FTS5 was too slow for the library's targets: queries
// took ~30 ms at p95 over 170k papers (the target is 20 ms) and building
// the FTS5 index bounded the import below 20k records/s. Here the build
// tokenizes on every core and merges into append-only postings, and a
// query intersects sorted posting lists and scores only its matches,
// keeping the best with a heap.
//
// bm25 follows FTS5's built-in function (ext/fts5/fts5_aux.c,
// fts5Bm25Function) term for term: k1 = 1.2, b = 0.75, an IDF per phrase
// of the expression (those under NOT and duplicates included), a row's
// frequency for a phrase is the sum of its columns' weights over the
// phrase's instances, the document length is the row's tokens over all
// columns, and the result is negated (lower is better).
//
// FTS5's own score for a row can depend on the rows its iterators visited
// before it: an AND below the root that finds "no match" on a row (a
// multi-word phrase whose words are there but not side by side) empties
// the position lists of every phrase under it, including phrases whose
// iterators already sit on a later row, and a phrase not advanced again
// scores nothing in that later row. For such expressions the scorer
// replays FTS5's iteration in rowid order (query_fts5.go), which needs
// the rows' slots in docid order (true after loading ascending docids).
// Once a replaced row has broken that order (until the index is rebuilt)
// the scorer counts every instance of a matching branch, which is FTS5's
// result whenever no such row came first; matches are always the same.
package textindex
