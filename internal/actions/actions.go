// Package actions carries out a workflow's built-in actions outside the
// run (flow.Actions): export writes papers to a file in the configured
// export directory, notify sends through internal/notify, snapshot backs
// the database up, and every attempt is recorded in the run's audit. The
// app builds a Runner from its configuration and the store; the engine
// knows only the interface.
package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/notify"
	"quarry/internal/research"
)

// Runner implements flow.Actions.
type Runner struct {
	// ExportDir is where export actions write (QUARRY_EXPORT_DIR); empty
	// refuses exports.
	ExportDir string
	// Send sends a notice (notify.Sender.Send); nil refuses notices.
	Send func(ctx context.Context, n notify.Notice) error
	// Backup snapshots the database for run runID, returning the file and
	// its size (store.Store.Backup); nil refuses snapshots.
	Backup func(ctx context.Context, runID string) (path string, size int64, err error)
	// Keep keeps one attempt in the run's audit (store.Store.RecordAction);
	// nil keeps nothing.
	Keep func(ctx context.Context, r engine.ActionRecord) error
}

var _ flow.Actions = (*Runner)(nil)

// Export writes the papers in e.Format (default RIS; any of
// codecs.ExportFormats) to e.File in ExportDir, or to
// <run>-<stage><ext> when e.File is empty. The name must be a plain file
// name, and the file is opened through os.Root, so nothing is written
// outside the directory whatever the name. An existing file is replaced.
func (r *Runner) Export(_ context.Context, e flow.Export) (flow.ExportResult, error) {
	if r.ExportDir == "" {
		return flow.ExportResult{}, fault.Errorf(fault.EInvalid, "export: no export directory is configured (QUARRY_EXPORT_DIR)")
	}
	format := e.Format
	if format == "" {
		format = biblio.RIS
	}
	if !slices.Contains(codecs.ExportFormats, format) {
		return flow.ExportResult{}, fault.Errorf(fault.EInvalid, "export: format %q is not one of %s", format, strings.Join(codecs.ExportFormats, ", "))
	}
	name := e.File
	if name == "" {
		name = e.RunID + "-" + e.Stage + codecs.Extension(format)
	}
	if !def.SafeFileName(name) {
		return flow.ExportResult{}, fault.Errorf(fault.EInvalid, "export: file %q must be a plain file name: no directory, no ..", name)
	}
	records := make([]biblio.Record, 0, len(e.Papers))
	for i, p := range e.Papers {
		var raw research.RawPaper
		b, err := json.Marshal(p)
		if err == nil {
			err = json.Unmarshal(b, &raw)
		}
		if err != nil {
			return flow.ExportResult{}, fault.Errorf(fault.EInvalid, "export: papers[%d] is not a paper: %v", i, err)
		}
		records = append(records, biblio.Record{Paper: raw})
	}
	var buf bytes.Buffer
	if err := codecs.WriteAll(&buf, format, records); err != nil {
		return flow.ExportResult{}, fmt.Errorf("export: %w", err)
	}
	if err := os.MkdirAll(r.ExportDir, 0o755); err != nil {
		return flow.ExportResult{}, fmt.Errorf("export: %w", err)
	}
	root, err := os.OpenRoot(r.ExportDir)
	if err != nil {
		return flow.ExportResult{}, fmt.Errorf("export: %w", err)
	}
	defer root.Close()
	// Written beside the final name and renamed, so a reader never sees half a file.
	tmp := "." + name + ".tmp"
	if err := root.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return flow.ExportResult{}, fmt.Errorf("export: %w", err)
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return flow.ExportResult{}, fmt.Errorf("export: %w", err)
	}
	return flow.ExportResult{Path: filepath.Join(r.ExportDir, name), Count: len(records), Format: format}, nil
}

// Notify sends m through the configured sender.
func (r *Runner) Notify(ctx context.Context, m flow.Message) error {
	if r.Send == nil {
		return fault.Errorf(fault.EInvalid, "notify: notices are not configured")
	}
	return r.Send(ctx, Notice(m))
}

// Notice is a flow message as internal/notify sends it (also for gate
// notices).
func Notice(m flow.Message) notify.Notice {
	return notify.Notice{Webhook: m.Webhook, Email: slices.Clone(m.Email), Subject: m.Subject, Text: m.Text}
}

// Snapshot backs the database up, recorded with the run.
func (r *Runner) Snapshot(ctx context.Context, runID string) (flow.SnapshotResult, error) {
	if r.Backup == nil {
		return flow.SnapshotResult{}, fault.Errorf(fault.EInvalid, "snapshot: backups are not configured")
	}
	path, size, err := r.Backup(ctx, runID)
	if err != nil {
		return flow.SnapshotResult{}, fmt.Errorf("snapshot: %w", err)
	}
	return flow.SnapshotResult{Path: path, Bytes: size}, nil
}

// Record keeps one attempt in the run's audit.
func (r *Runner) Record(ctx context.Context, rec engine.ActionRecord) error {
	if r.Keep == nil {
		return nil
	}
	return r.Keep(ctx, rec)
}
