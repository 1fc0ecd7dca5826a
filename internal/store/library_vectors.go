package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"quarry/internal/fault"
)

// PaperText is what an embeddings model reads of a library paper: its
// title and abstract, under its docid.
type PaperText struct {
	Doc      int64
	Title    string
	Abstract string
}

// PaperVector is a paper's embedding under one model.
type PaperVector struct {
	Doc    int64
	Vector []float32
}

// VectorSet is every stored vector of one model, read at once for
// brute-force nearest-neighbour search: Docs[i]'s vector is
// Data[i*Dim:(i+1)*Dim], and Years[i] its paper's year (0: unknown), so
// a search can keep a year range without another query.
type VectorSet struct {
	Model      string
	Dim        int
	Generation int64
	Docs       []int64
	Years      []int
	Data       []float32
}

// VectorCounts is how far embedding the library has come for a model.
type VectorCounts struct {
	Papers   int // papers in the library
	Embedded int // of them with a vector of the model
}

// PapersWithoutVector returns up to limit papers with no vector of model,
// in docid order after the docid after: the background job asks for the
// next batch from where it stopped, and after a restart from 0 again,
// which finds exactly the papers still missing (resumable by
// construction).
func (s *Store) PapersWithoutVector(ctx context.Context, model string, after int64, limit int) ([]PaperText, error) {
	if limit <= 0 {
		return nil, fault.Errorf(fault.EInvalid, "the limit must be positive, not %d", limit)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT p.docid, p.title, p.abstract FROM papers p
		WHERE p.docid > ? AND NOT EXISTS (SELECT 1 FROM paper_vectors v WHERE v.model = ? AND v.docid = p.docid)
		ORDER BY p.docid LIMIT ?`, after, model, limit)
	if err != nil {
		return nil, fmt.Errorf("store: papers without vectors: %w", err)
	}
	defer rows.Close()
	var out []PaperText
	for rows.Next() {
		var p PaperText
		if err := rows.Scan(&p.Doc, &p.Title, &p.Abstract); err != nil {
			return nil, fmt.Errorf("store: papers without vectors: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// PutPaperVectors stores vectors of model, replacing any the papers had,
// in one transaction. A vector of a paper deleted meanwhile is dropped,
// and so is one for a paper whose title or abstract no longer reads as
// texts says it did when it was embedded (a re-import changed it while
// the model was answering): the next pass embeds it afresh.
func (s *Store) PutPaperVectors(ctx context.Context, model string, texts []PaperText, vecs [][]float32) (int, error) {
	if len(texts) != len(vecs) {
		return 0, fault.Errorf(fault.EInvalid, "%d texts but %d vectors", len(texts), len(vecs))
	}
	if strings.TrimSpace(model) == "" {
		return 0, fault.Errorf(fault.EInvalid, "vectors need a model name")
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: vectors: begin: %w", err)
	}
	defer tx.Rollback()
	put, err := tx.PrepareContext(ctx, putVectorSQL)
	if err != nil {
		return 0, fmt.Errorf("store: vectors: %w", err)
	}
	defer put.Close()
	stored := 0
	for i, t := range texts {
		res, err := put.ExecContext(ctx, model, t.Doc, len(vecs[i]), encodeVector(vecs[i]), t.Title, t.Abstract)
		if err != nil {
			return 0, fmt.Errorf("store: vectors: %w", err)
		}
		n, _ := res.RowsAffected()
		stored += int(n)
	}
	if err := bumpVectorGeneration(ctx, tx); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: vectors: commit: %w", err)
	}
	return stored, nil
}

// putVectorSQL stores a paper's vector for a model (?1), the paper by
// docid (?2), with its dimension (?3) and encoding (?4), unless its title
// (?5) or abstract (?6) changed since the vector was computed.
const putVectorSQL = `INSERT INTO paper_vectors (model, docid, dim, vector)
	SELECT ?1, docid, ?3, ?4 FROM papers WHERE docid = ?2 AND title = ?5 AND abstract = ?6
	ON CONFLICT (model, docid) DO UPDATE SET dim = excluded.dim, vector = excluded.vector`

func bumpVectorGeneration(ctx context.Context, tx *tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE vector_generation SET generation = generation + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("store: vectors: %w", err)
	}
	return nil
}

// VectorGeneration changes whenever a vector is stored or dropped, so a
// cache of vectors is fresh while it stays the same (one row read).
func (s *Store) VectorGeneration(ctx context.Context) (int64, error) {
	var g int64
	if err := s.read.QueryRowContext(ctx, `SELECT generation FROM vector_generation WHERE id = 1`).Scan(&g); err != nil {
		return 0, fmt.Errorf("store: vector generation: %w", err)
	}
	return g, nil
}

// PaperVectors returns the vectors of model for docs (those that have
// one), in no particular order.
func (s *Store) PaperVectors(ctx context.Context, model string, docs []int64) ([]PaperVector, error) {
	var out []PaperVector
	for start := 0; start < len(docs); start += 500 {
		chunk := docs[start:min(start+500, len(docs))]
		args := []any{model}
		for _, d := range chunk {
			args = append(args, d)
		}
		rows, err := s.read.QueryContext(ctx, `SELECT docid, vector FROM paper_vectors WHERE model = ? AND docid IN (?`+
			strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("store: paper vectors: %w", err)
		}
		for rows.Next() {
			var v PaperVector
			var blob []byte
			if err := rows.Scan(&v.Doc, &blob); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: paper vectors: %w", err)
			}
			v.Vector = decodeVector(blob)
			out = append(out, v)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: paper vectors: %w", err)
		}
	}
	return out, nil
}

// LibraryVectors reads every vector of model of dimension dim (0: the
// dimension most of them have) with its paper's year, for an in-memory
// index. The generation is read in the same snapshot, so the set is
// exactly the vectors of that generation.
func (s *Store) LibraryVectors(ctx context.Context, model string, dim int) (VectorSet, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
	}
	defer tx.Rollback()
	set := VectorSet{Model: model, Dim: dim}
	if err := tx.QueryRowContext(ctx, `SELECT generation FROM vector_generation WHERE id = 1`).Scan(&set.Generation); err != nil {
		return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
	}
	if set.Dim == 0 {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT dim FROM paper_vectors WHERE model = ?
			GROUP BY dim ORDER BY count(*) DESC LIMIT 1), 0)`, model).Scan(&set.Dim); err != nil {
			return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM paper_vectors WHERE model = ? AND dim = ?`, model, set.Dim).Scan(&n); err != nil {
		return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
	}
	set.Docs, set.Years, set.Data = make([]int64, 0, n), make([]int, 0, n), make([]float32, 0, n*set.Dim)
	rows, err := tx.QueryContext(ctx, `SELECT v.docid, p.year, v.vector FROM paper_vectors v JOIN papers p ON p.docid = v.docid
		WHERE v.model = ? AND v.dim = ? ORDER BY v.docid`, model, set.Dim)
	if err != nil {
		return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc int64
		var year int
		var blob []byte
		if err := rows.Scan(&doc, &year, &blob); err != nil {
			return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
		}
		if len(blob) != 4*set.Dim {
			continue
		}
		set.Docs, set.Years = append(set.Docs, doc), append(set.Years, year)
		set.Data = appendVector(set.Data, blob)
	}
	if err := rows.Err(); err != nil {
		return VectorSet{}, fmt.Errorf("store: library vectors: %w", err)
	}
	return set, nil
}

// CountVectors says how many of the library's papers have a vector of
// model.
func (s *Store) CountVectors(ctx context.Context, model string) (VectorCounts, error) {
	var c VectorCounts
	if err := s.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM paper_vectors WHERE model = ?)`, model).
		Scan(&c.Papers, &c.Embedded); err != nil {
		return c, fmt.Errorf("store: count vectors: %w", err)
	}
	return c, nil
}

// encodeVector writes v as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	return appendVector(make([]float32, 0, len(b)/4), b)
}

func appendVector(dst []float32, b []byte) []float32 {
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}
