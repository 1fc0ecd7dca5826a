package library

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"quarry/internal/fault"
	"quarry/internal/store"
)

// Embedder computes one vector per text with a named model. The
// embeddings client (internal/skills/embed) implements it; the library
// knows only this interface, so it reaches no HTTP package.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// VectorStore is what embedding the library and searching its vectors
// need; *store.Store implements it, one transaction per method.
type VectorStore interface {
	PapersWithoutVector(ctx context.Context, model string, after int64, limit int) ([]store.PaperText, error)
	PutPaperVectors(ctx context.Context, model string, texts []store.PaperText, vecs [][]float32) (int, error)
	CountVectors(ctx context.Context, model string) (store.VectorCounts, error)
	VectorGeneration(ctx context.Context) (int64, error)
	LibraryVectors(ctx context.Context, model string, dim int) (store.VectorSet, error)
	// SelectionDocs narrows a search to a project's library selection.
	SelectionDocs(ctx context.Context, project string) (map[int64]struct{}, error)
}

var _ VectorStore = (*store.Store)(nil)

// EmbeddingOptions tune the background embedding; zero fields mean the
// defaults.
type EmbeddingOptions struct {
	// Batch is how many papers one call of the embedder carries (the
	// client may split it further); default 64.
	Batch int
	// Workers bounds the calls in flight at once; default 2, so a
	// self-hosted model keeps answering searches' queries meanwhile.
	Workers int
	// Idle is how long the job sleeps once every paper has a vector
	// before it looks for new ones (Kick wakes it at once); default 1m.
	Idle time.Duration
	// Pause is the first wait after a failed pass (the server down, the
	// key refused); it doubles up to 16 times itself; default 30s.
	Pause  time.Duration
	Logger *slog.Logger
}

// EmbeddingStatus is how embedding the library is going, for the library
// page: Embedded of Papers have a vector of Model.
type EmbeddingStatus struct {
	Model    string
	Papers   int
	Embedded int
	// Running is true while a pass is embedding papers.
	Running bool
	// Errors counts failed batches since start; LastError is the latest
	// one's message, LastErrorAt when it happened.
	Errors      int
	LastError   string
	LastErrorAt time.Time
}

// Embedding embeds the library's papers in the background: in passes over
// the papers that lack a vector of the model (the store lists them, so a
// restart continues where the last process stopped), a bounded number of
// batches at a time, sleeping when none is left. Searches never wait for
// it: they use the vectors that exist.
type Embedding struct {
	store VectorStore
	emb   Embedder
	opts  EmbeddingOptions
	kick  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	status EmbeddingStatus
}

// NewEmbedding returns the job over st with emb; Start runs it.
func NewEmbedding(st VectorStore, emb Embedder, opts EmbeddingOptions) *Embedding {
	if opts.Batch <= 0 {
		opts.Batch = 64
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Idle <= 0 {
		opts.Idle = time.Minute
	}
	if opts.Pause <= 0 {
		opts.Pause = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Embedding{store: st, emb: emb, opts: opts, kick: make(chan struct{}, 1), status: EmbeddingStatus{Model: emb.Model()}}
}

// Start runs the job until ctx is cancelled (Wait waits for it to stop).
func (e *Embedding) Start(ctx context.Context) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		e.run(ctx)
	}()
}

// Wait returns once the job has stopped after its context was cancelled;
// a batch in flight is abandoned, not stored.
func (e *Embedding) Wait() { e.wg.Wait() }

// Kick wakes a sleeping job, e.g. after an import added papers.
func (e *Embedding) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Status is a snapshot of the job's progress.
func (e *Embedding) Status() EmbeddingStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status
}

func (e *Embedding) run(ctx context.Context) {
	pause := e.opts.Pause
	for ctx.Err() == nil {
		failed := e.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := e.opts.Idle
		if failed {
			wait = pause
			pause = min(2*pause, 16*e.opts.Pause)
		} else {
			pause = e.opts.Pause
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-e.kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// pass embeds every paper lacking a vector, in docid order. A batch the
// server refuses as invalid (a text it cannot read) is skipped and the
// pass goes on; any other failure (the server down, the key refused)
// ends the pass, which reports it so the job pauses before the next.
func (e *Embedding) pass(ctx context.Context) (failed bool) {
	model := e.emb.Model()
	e.refresh(ctx, true)
	defer e.refresh(ctx, false)
	var after int64
	for ctx.Err() == nil {
		todo, err := e.store.PapersWithoutVector(ctx, model, after, e.opts.Batch*e.opts.Workers)
		if err != nil {
			e.fail(ctx, err)
			return true
		}
		if len(todo) == 0 {
			return false
		}
		after = todo[len(todo)-1].Doc
		errs := make([]error, 0, e.opts.Workers)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for start := 0; start < len(todo); start += e.opts.Batch {
			batch := todo[start:min(start+e.opts.Batch, len(todo))]
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := e.embedBatch(ctx, model, batch); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		e.refresh(ctx, true)
		for _, err := range errs {
			e.fail(ctx, err)
			if fault.ErrorCode(err) != fault.EInvalid {
				return true
			}
		}
	}
	return false
}

func (e *Embedding) embedBatch(ctx context.Context, model string, batch []store.PaperText) error {
	texts := make([]string, len(batch))
	for i, p := range batch {
		texts[i] = PaperEmbeddingText(p.Title, p.Abstract)
	}
	vecs, err := e.emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	if _, err := e.store.PutPaperVectors(ctx, model, batch, vecs); err != nil {
		return fmt.Errorf("store the vectors: %w", err)
	}
	return nil
}

// PaperEmbeddingText is what a paper is embedded as: its title, then its
// abstract, the two fields that say what it is about.
func PaperEmbeddingText(title, abstract string) string {
	if abstract == "" {
		return title
	}
	return title + "\n\n" + abstract
}

// refresh re-counts the vectors and marks the job running or not.
func (e *Embedding) refresh(ctx context.Context, running bool) {
	c, err := e.store.CountVectors(context.WithoutCancel(ctx), e.emb.Model())
	e.mu.Lock()
	defer e.mu.Unlock()
	e.status.Running = running && ctx.Err() == nil
	if err == nil {
		e.status.Papers, e.status.Embedded = c.Papers, c.Embedded
	}
}

func (e *Embedding) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return // stopping, not failing
	}
	msg := err.Error()
	if code := fault.ErrorCode(err); code != fault.EInternal {
		msg = fault.ErrorMessage(err)
	}
	e.opts.Logger.Warn("embedding the library", "model", e.emb.Model(), "err", err)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.status.Errors++
	e.status.LastError = msg
	e.status.LastErrorAt = time.Now().UTC()
}
