package dbcopy

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// verifyTables counts and checksums every table on both sides. The
// checksum is SHA-256 over the rows in key order, each value rendered
// canonically (digest.add): the same rows with the same values give the
// same sum whichever database they came from.
func verifyTables(ctx context.Context, src *sql.Tx, pool *pgxpool.Pool, tables []table) ([]TableReport, error) {
	var out []TableReport
	for _, t := range tables {
		r := TableReport{Name: t.name}
		var err error
		if r.Rows, r.Checksum, err = sqliteDigest(ctx, src, t); err != nil {
			return out, err
		}
		if r.TargetRows, r.TargetChecksum, err = pgDigest(ctx, pool, t); err != nil {
			return out, err
		}
		r.Match = r.Rows == r.TargetRows && r.Checksum == r.TargetChecksum
		out = append(out, r)
	}
	return out, nil
}

func sqliteDigest(ctx context.Context, src *sql.Tx, t table) (int64, string, error) {
	rows, err := src.QueryContext(ctx, sqliteSelect(t, true))
	if err != nil {
		return 0, "", fmt.Errorf("dbcopy: read %s: %w", t.name, err)
	}
	defer rows.Close()
	d := newDigest()
	vals := make([]any, len(t.cols))
	ptrs := make([]any, len(t.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return 0, "", fmt.Errorf("dbcopy: read %s: %w", t.name, err)
		}
		for i, c := range t.cols {
			// Rendered as copied: a value the copy converts losslessly
			// (TEXT into BYTEA) checksums as what the target holds.
			v, err := convert(vals[i], c.pgType)
			if err != nil {
				return 0, "", fmt.Errorf("dbcopy: %s.%s: %w", t.name, c.name, err)
			}
			d.add(v)
		}
		d.endRow()
	}
	if err := rows.Err(); err != nil {
		return 0, "", fmt.Errorf("dbcopy: read %s: %w", t.name, err)
	}
	return d.rows, d.sum(), nil
}

func pgDigest(ctx context.Context, pool *pgxpool.Pool, t table) (int64, string, error) {
	cols := make([]string, len(t.cols))
	types := map[string]string{}
	for i, c := range t.cols {
		cols[i] = quotePG(c.name)
		types[c.name] = c.pgType
	}
	keys := make([]string, len(t.order))
	for i, k := range t.order {
		keys[i] = quotePG(k)
		if types[k] == "text" {
			keys[i] += ` COLLATE "C"`
		}
		keys[i] += ` NULLS FIRST` // SQLite's order
	}
	rows, err := pool.Query(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+quotePG(t.name)+` ORDER BY `+strings.Join(keys, ", "))
	if err != nil {
		return 0, "", fmt.Errorf("dbcopy: read target %s: %w", t.name, err)
	}
	defer rows.Close()
	d := newDigest()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return 0, "", fmt.Errorf("dbcopy: read target %s: %w", t.name, err)
		}
		for _, v := range vals {
			d.add(v)
		}
		d.endRow()
	}
	if err := rows.Err(); err != nil {
		return 0, "", fmt.Errorf("dbcopy: read target %s: %w", t.name, err)
	}
	return d.rows, d.sum(), nil
}

// digest hashes rows of values. Each value is a type letter, its
// canonical text's length and the text (integers in decimal, floats as
// strconv 'g' -1, text as is, blobs in hex; NULL is the letter alone),
// so no two different rows render alike.
type digest struct {
	h    hash.Hash
	rows int64
	buf  []byte
}

func newDigest() *digest { return &digest{h: sha256.New()} }

func (d *digest) add(v any) {
	b := d.buf[:0]
	var tag byte
	var text string
	switch x := v.(type) {
	case nil:
		d.h.Write([]byte{'N'})
		return
	case int64:
		tag, text = 'i', strconv.FormatInt(x, 10)
	case int32:
		tag, text = 'i', strconv.FormatInt(int64(x), 10)
	case float64:
		tag, text = 'f', strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		tag, text = 't', x
	case []byte:
		tag, text = 'b', hex.EncodeToString(x)
	default:
		tag, text = '?', fmt.Sprintf("%T:%v", v, v)
	}
	b = append(b, tag)
	b = strconv.AppendInt(b, int64(len(text)), 10)
	b = append(b, ':')
	d.h.Write(b)
	d.h.Write([]byte(text))
	d.buf = b
}

func (d *digest) endRow() {
	d.h.Write([]byte{'\n'})
	d.rows++
}

func (d *digest) sum() string { return hex.EncodeToString(d.h.Sum(nil)) }
