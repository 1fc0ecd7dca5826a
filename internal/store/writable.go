package store

import (
	"context"
	"fmt"
	"time"
)

// probeBytes is what the write probe writes: more than one page, so a
// database that can take it has room for a step's commit, which is what
// the waiting work needs.
const probeBytes = 64 << 10

// Writable reports whether the database takes a write of some size now: it
// writes probeBytes to the write_probe table and deletes them, two short
// transactions. A full disk (or the MaxBytes cap) makes it fail with an
// error StorageFull recognises.
func (s *Store) Writable(ctx context.Context) error {
	if _, err := s.write.ExecContext(ctx, writeProbeSQL(s.write.d), probeBytes); err != nil {
		return fmt.Errorf("store: write probe: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, `DELETE FROM write_probe WHERE id = 1`); err != nil {
		return fmt.Errorf("store: write probe: %w", err)
	}
	return nil
}

// writeProbeSQL writes the probe's row, of as many bytes as the parameter.
func writeProbeSQL(d dialect) string {
	return `INSERT INTO write_probe (id, pad) VALUES (1, ` + d.zeroBlob("?") + `)
		ON CONFLICT (id) DO UPDATE SET pad = excluded.pad`
}

// waitWritable waits until Writable succeeds, trying after 250 ms and then
// at doubling intervals up to 5 s, so work resumes within seconds of space
// being freed without hammering a full disk meanwhile. It returns early
// only when ctx is done (the process is stopping).
func (s *Store) waitWritable(ctx context.Context) error {
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		err := s.Writable(ctx)
		if err == nil {
			return nil
		}
		if !Transient(err) {
			return err
		}
	}
}
