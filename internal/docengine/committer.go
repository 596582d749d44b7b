package docengine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// Group commit of documents (docs/decisions/0071-document-group-commit.md),
// in the pattern of the engine's committer for files: while one batch of
// replacements is being stored, the sets of this process that arrive meanwhile
// wait and go together in the next, one backend transaction
// (backend.DocBatcher). Each replacement keeps its own condition and its
// own result: the batch decides nothing, every set's version, history and
// expiry are still decided by Put (versions.go) for that document
// alone, and a replacement refused in a batch (ErrDocChanged) is retried
// by its own set as it would be alone. Each caller returns only once the
// transaction that holds its replacement is durable.
//
// A batch of one goes through ReplaceDoc, as it did before batching
// existed: a lone writer pays nothing for it. A batch the backend refuses
// as a whole (an error, not a per-document result) is stored again one
// replacement at a time, each in its own transaction, so that a document
// that breaks a transaction fails only its own set, not its batch-mates'.
type committer struct {
	once  sync.Once
	db    backend.Documents
	batch backend.DocBatcher // db, when it stores batches

	mu    sync.Mutex
	queue []*docReq
	busy  bool
	// active counts the sets of this process in progress (Set, from its
	// validation to its result, but for the time one spends outside the
	// committer), so that a leader knows when others are about to queue.
	active atomic.Int64
	// wake, when not nil, is closed once the queue holds every set in
	// progress (or maxDocBatch): a leader waits for it.
	wake chan struct{}
}

type docReq struct {
	r      backend.DocReplace
	d      backend.Doc
	err    error
	done   chan struct{}
	leader bool
}

// maxDocBatch bounds the replacements of one transaction.
const maxDocBatch = 256

// maxDocWait bounds how long a leader waits for the sets in progress to
// queue theirs before it stores what it has.
const maxDocWait = 200 * time.Microsecond

// begin and end bracket a set in progress (a collection's Set).
func (c *committer) begin() { c.active.Add(1) }

func (c *committer) end() {
	c.active.Add(-1)
	if c.batch == nil {
		return
	}
	c.mu.Lock()
	c.wakeLocked()
	c.mu.Unlock()
}

// wakeLocked wakes a waiting leader when every set in progress has queued.
func (c *committer) wakeLocked() {
	if c.wake != nil && int64(len(c.queue)) >= min(c.active.Load(), maxDocBatch) {
		close(c.wake)
		c.wake = nil
	}
}

// init binds the committer to the store's documents backend.
func (c *committer) init(b backend.Backend, db backend.Documents) {
	c.once.Do(func() {
		c.db = db
		c.batch, _ = backend.As[backend.DocBatcher](b)
	})
}

// ReplaceDoc stores r as the backend's ReplaceDoc would, in a transaction
// it may share with the concurrent sets of this process, and returns once
// that transaction is durable.
func (c *committer) ReplaceDoc(ctx context.Context, r backend.DocReplace) (backend.Doc, error) {
	if c.batch == nil {
		return c.db.ReplaceDoc(ctx, r)
	}
	if r.Change != nil && r.Change.Key != nil {
		// A set with an idempotency key goes alone: its claim shares a
		// transaction with its set only (on PostgreSQL a batch is one
		// implicit transaction of plain statements). A leader does not
		// wait for it meanwhile.
		c.end()
		defer c.begin()
		return c.db.ReplaceDoc(ctx, r)
	}
	q := &docReq{r: r}
	c.mu.Lock()
	c.queue = append(c.queue, q)
	c.wakeLocked()
	if c.busy {
		q.done = make(chan struct{}) // only a waiter needs one
		c.mu.Unlock()
		<-q.done
		if !q.leader {
			return q.d, q.err
		}
		c.mu.Lock()
	}
	// This caller leads: it stores one batch (its own replacement among
	// them), then hands the lead to the first waiter, if any.
	c.busy = true
	c.mu.Unlock()
	// Other sets of this process in progress are about to queue theirs
	// (the previous batch's among them, which its leader has just
	// released): wait, at most maxDocWait, until all have, so that they
	// share this transaction rather than alternate between two half-full
	// ones. The wait blocks, so the sets it waits for run on this core
	// too. A lone writer does not wait.
	c.mu.Lock()
	if int64(len(c.queue)) < min(c.active.Load(), maxDocBatch) {
		wake := make(chan struct{})
		c.wake = wake
		c.mu.Unlock()
		t := time.NewTimer(maxDocWait)
		select {
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		c.mu.Lock()
		if c.wake == wake {
			c.wake = nil
		}
	}
	n := min(len(c.queue), maxDocBatch)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx) // the batch holds others' sets
	}
	c.store(ctx, batch)
	for _, b := range batch {
		b.leader = false
		if b != q {
			close(b.done)
		}
	}
	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		next.leader = true
		close(next.done)
	} else {
		c.busy = false
	}
	c.mu.Unlock()
	return q.d, q.err
}

// store stores a batch and sets each request's result.
func (c *committer) store(ctx context.Context, batch []*docReq) {
	if len(batch) == 1 {
		batch[0].d, batch[0].err = c.db.ReplaceDoc(ctx, batch[0].r)
		return
	}
	rs := make([]backend.DocReplace, len(batch))
	for i, b := range batch {
		rs[i] = b.r
	}
	results, err := c.batch.ReplaceDocs(ctx, rs)
	if err == nil && len(results) != len(batch) {
		err = fmt.Errorf("satchel: backend returned %d results for %d documents", len(results), len(batch))
		for _, b := range batch {
			b.err = err
		}
		return
	}
	if err != nil {
		// Nothing of the batch was stored: each replacement again, in a
		// transaction of its own, so that only the one that broke the
		// batch (if one did) fails.
		for _, b := range batch {
			b.d, b.err = c.db.ReplaceDoc(ctx, b.r)
		}
		return
	}
	for i, b := range batch {
		b.d, b.err = results[i].Doc, results[i].Err
	}
}
