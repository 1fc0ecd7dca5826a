package library

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
)

// Jobs runs imports in the background and remembers how each is going, so
// a web upload can answer at once and a page can poll for progress and
// then show the summary. Job state lives in memory: after a restart the
// list is empty; an interrupted import leaves the library as it was (see
// Import), so importing the file again is always safe.
type Jobs struct {
	store     Store
	ctx       context.Context
	now       func() time.Time
	observers []ImportObserver

	// spoolDir holds uploads waiting for or being imported ("": the
	// system's temporary directory), see UseSpoolDir.
	spoolDir string

	mu   sync.Mutex
	jobs map[string]*job
	wg   sync.WaitGroup
}

// spoolPattern names spooled uploads.
const spoolPattern = "quarry-upload-*"

// UseSpoolDir makes Spool write into dir, a directory Quarry owns beside
// its database, creating it, and removes what a previous process left
// there: an upload whose import was killed (kill -9, a crash, a power
// cut) never reached the cleanup at the end of its job. Call it once at
// start, before any upload; it returns how many files it removed. One
// server uses a database, so nothing else spools into its directory.
func (j *Jobs) UseSpoolDir(dir string) (removed int, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("upload directory: %w", err)
	}
	left, err := filepath.Glob(filepath.Join(dir, spoolPattern))
	if err != nil {
		return 0, fmt.Errorf("upload directory: %w", err)
	}
	for _, p := range left {
		if err := os.Remove(p); err == nil {
			removed++
		}
	}
	j.spoolDir = dir
	return removed, nil
}

// Spool copies an upload to a file of the spool directory, so a large
// import streams from disk and outlives the request; Start with
// removeAfter removes it when the import ends or fails. A failed copy
// leaves no file.
func (j *Jobs) Spool(src io.Reader) (string, error) {
	f, err := os.CreateTemp(j.spoolDir, spoolPattern)
	if err != nil {
		return "", fmt.Errorf("spool upload: %w", err)
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fault.Errorf(fault.EInvalid, "read the upload: %v", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("spool upload: %w", err)
	}
	return f.Name(), nil
}

// maxJobs bounds the remembered jobs; the oldest finished ones go first.
const maxJobs = 50

// JobStatus is a snapshot of one import, for the progress page.
type JobStatus struct {
	ID     string
	Name   string
	Format string
	// By names who started it; Project is the project whose library
	// selection it fills ("" for the installation's library alone).
	By       string
	Project  string
	Started  time.Time
	Finished time.Time
	Progress Progress
	Done     bool
	// Err is why the import stopped early ("" if it did not).
	Err string
}

type job struct {
	status JobStatus
}

// ImportObserver is told of every import a Jobs runs when it ends, so an
// operator can count imported records (internal/metrics implements it):
// the import's stats, how long it took and why it stopped (nil when its
// records were committed). It is called from the import's goroutine.
type ImportObserver func(stats ImportStats, took time.Duration, err error)

// NewJobs returns a job runner over st; cancelling ctx stops running
// imports (which then leave the library as it was), e.g. at shutdown.
// observers are told of every import that ends.
func NewJobs(ctx context.Context, st Store, observers ...ImportObserver) *Jobs {
	return &Jobs{store: st, ctx: ctx, now: time.Now, jobs: map[string]*job{}, observers: observers}
}

// Importer is who starts an import: a person (By, a display name) and
// the project whose library selection the import fills ("" for none).
type Importer struct {
	By, Project string
}

// Start imports the file at path in the background and returns the job's
// ID. The file is opened (and its format detected) and its first record
// read before Start returns, so a file Quarry cannot read — in an unknown
// format, with CSV columns that cannot be mapped, empty, or with no record
// in the format chosen — is refused at once with an EInvalid error, which
// the upload form can show, rather than failing as a job; so is a gzipped
// file that decompresses past read.Gzip (codecs.CheckGzip reads it once
// first) or whose stream is broken. The job removes
// the file when it ends if removeAfter is set (uploads are spooled to a
// temporary file).
func (j *Jobs) Start(path, name string, who Importer, read codecs.Options, removeAfter bool) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if removeAfter {
			os.Remove(path)
		}
		return "", fault.Errorf(fault.EInvalid, "open %s: %v", name, err)
	}
	rd, err := checkAndOpen(f, name, read)
	if err != nil {
		f.Close()
		if removeAfter {
			os.Remove(path)
		}
		return "", err
	}
	rd.file = f
	first, err := rd.Next()
	if err != nil {
		rd.Close()
		if removeAfter {
			os.Remove(path)
		}
		return "", err
	}
	pending := &first // read above; the stream starts with it
	next := func() (Record, error) {
		if err := j.ctx.Err(); err != nil {
			return Record{}, err
		}
		if pending != nil {
			rec := *pending
			pending = nil
			return rec, nil
		}
		return rd.Next()
	}
	id := newID()
	jb := &job{status: JobStatus{ID: id, Name: name, Format: rd.Format(), By: who.By, Project: who.Project, Started: j.now().UTC()}}
	j.mu.Lock()
	j.jobs[id] = jb
	j.prune()
	j.mu.Unlock()

	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer func() {
			rd.Close()
			if removeAfter {
				os.Remove(path)
			}
		}()
		stats, err := Import(j.ctx, j.store, next, ImportOptions{Project: who.Project, By: who.By, Progress: func(p Progress) {
			// Import keeps mutating its stats after this call returns;
			// clone here, in its goroutine, so readers never share them.
			p.ImportStats = p.ImportStats.clone()
			j.mu.Lock()
			jb.status.Progress = p
			j.mu.Unlock()
		}})
		j.mu.Lock()
		jb.status.Progress = Progress{ImportStats: stats}
		jb.status.Done = true
		jb.status.Finished = j.now().UTC()
		if err != nil {
			why := err.Error() // a broken file says what broke
			if fault.ErrorCode(err) != fault.EInternal {
				why = fault.ErrorMessage(err) // the disk is full, the database busy
			}
			jb.status.Err = fmt.Sprintf("stopped after reading %d records: %s; %s", stats.Read, why, stats.Outcome())
		}
		took := jb.status.Finished.Sub(jb.status.Started)
		j.mu.Unlock()
		for _, o := range j.observers {
			o(stats, took, err)
		}
	}()
	return id, nil
}

// checkAndOpen refuses a gzip bomb or a broken gzip stream before the
// job starts, then opens f from its start.
func checkAndOpen(f *os.File, name string, read codecs.Options) (*Reader, error) {
	if err := codecs.CheckGzip(f, name, read.Gzip); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind %s: %w", name, err)
	}
	return NewReader(f, name, read)
}

// Status returns a snapshot of job id, or ENotFound.
func (j *Jobs) Status(id string) (JobStatus, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	jb, ok := j.jobs[id]
	if !ok {
		return JobStatus{}, fault.Errorf(fault.ENotFound, "no import %q (imports are forgotten when the server restarts)", id)
	}
	return jb.snapshot(), nil
}

// List returns every remembered job, newest first.
func (j *Jobs) List() []JobStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JobStatus, 0, len(j.jobs))
	for _, jb := range j.jobs {
		out = append(out, jb.snapshot())
	}
	slices.SortFunc(out, func(a, b JobStatus) int { return b.Started.Compare(a.Started) })
	return out
}

// Wait blocks until every started job has ended (for shutdown and tests).
func (j *Jobs) Wait() { j.wg.Wait() }

func (jb *job) snapshot() JobStatus {
	s := jb.status
	s.Progress.ImportStats = s.Progress.ImportStats.clone()
	return s
}

// prune drops the oldest finished jobs beyond maxJobs; j.mu is held.
func (j *Jobs) prune() {
	if len(j.jobs) <= maxJobs {
		return
	}
	var done []*job
	for _, jb := range j.jobs {
		if jb.status.Done {
			done = append(done, jb)
		}
	}
	slices.SortFunc(done, func(a, b *job) int { return a.status.Started.Compare(b.status.Started) })
	for _, jb := range done {
		if len(j.jobs) <= maxJobs {
			return
		}
		delete(j.jobs, jb.status.ID)
	}
}

// newID names a job or an import's stage: random, so no two running
// imports (in this process or another) share one.
func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
