package textindex

import (
	"errors"
	"io"
	"sync"
)

// Doc is one row for AddAll.
type Doc struct {
	ID   int64
	Cols []string
}

// buildBatch is how many rows a tokenizing worker takes at once: enough
// that the merge consults the dictionary once per distinct term of many
// rows, few enough that the merge starts early.
const buildBatch = 8192

// AddAll indexes every row next returns until io.EOF (any other error
// stops it and is returned; the rows merged before stay). Rows are
// tokenized by the index's workers in parallel and merged in the order
// next returned them; readers see each batch whole once it is merged and
// are held up only for short stretches meanwhile (see merge). A docid already present is replaced. next is called
// from one goroutine at a time.
func (ix *Index) AddAll(next func() (Doc, error)) error {
	ix.write.Lock()
	defer ix.write.Unlock()
	work := make(chan *batchInput, ix.workers)
	done := make(chan *batch, ix.workers)
	stop := make(chan struct{})
	var readErr error
	go func() { // the reader: next is not safe for concurrent use
		defer close(work)
		for seq := 0; ; seq++ {
			in := &batchInput{seq: seq}
			for len(in.docs) < buildBatch {
				d, err := next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						readErr = err
					}
					break
				}
				in.docs = append(in.docs, d)
			}
			if len(in.docs) > 0 {
				select {
				case work <- in:
				case <-stop:
					return
				}
			}
			if len(in.docs) < buildBatch {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range ix.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := newAnalyzer(ix.ncol, ix.tok)
			for in := range work {
				var err error
				for _, d := range in.docs {
					if err = a.add(d.ID, d.Cols); err != nil {
						break
					}
				}
				b := a.finish()
				b.seq, b.err = in.seq, err
				select {
				case done <- b:
				case <-stop:
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	// Merge in sequence order: a row replaced within the load keeps its
	// last version, as one Add after another would.
	pending := map[int]*batch{}
	want := 0
	var err error
	for b := range done {
		if err != nil {
			continue
		}
		if b.err != nil {
			err = b.err
			close(stop)
			continue
		}
		pending[b.seq] = b
		for pending[want] != nil {
			nb := pending[want]
			delete(pending, want)
			ix.merge(nb)
			want++
		}
	}
	ix.trim()
	if err != nil {
		return err
	}
	return readErr
}

type batchInput struct {
	seq  int
	docs []Doc
}
