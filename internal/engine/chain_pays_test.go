package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// packRecorder keeps the packs of the Appends a gated backend receives.
type packRecorder struct {
	*gatedBackend
	mu    sync.Mutex
	packs []string
}

func (r *packRecorder) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	r.mu.Lock()
	for _, nc := range ncs {
		r.packs = append(r.packs, string(nc.Pack))
	}
	r.mu.Unlock()
	return r.gatedBackend.Append(ctx, ncs)
}

// remoteRecorder declares backend.Remote, as a server's backend does.
type remoteRecorder struct{ *packRecorder }

func (remoteRecorder) Remote() {}

// TestChainsThatPay: sixteen writers of distinct files of one thread,
// queued behind a commit held at the backend. On an embedded backend a
// chained commit would store its parents' files again (the writes'
// packs quadratic in the queue's length): each file's text is stored
// exactly once. On a backend a round trip away (backend.Remote) they
// chain, in at most three Appends, storing their parents' files again.
func TestChainsThatPay(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprintf("remote=%v", remote), func(t *testing.T) {
			ctx := context.Background()
			rec := &packRecorder{gatedBackend: newGated(0)}
			var b backend.Backend = rec
			if remote {
				b = remoteRecorder{rec}
			}
			th, err := rec.Thread(ctx, "s", "main", true)
			if err != nil {
				t.Fatal(err)
			}
			e := New(b, Options{})
			const writers = 16
			text := func(i int) string {
				return strings.Repeat(fmt.Sprintf("file %02d of the thread's notes\n", i), 100)
			}
			write := func(i int, gate <-chan struct{}) error {
				_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
					if gate != nil {
						<-gate
					}
					return CommitInfo{Meta: []byte(`{}`)}, tx.Put(ctx, fmt.Sprintf("notes/%02d.md", i), text(i))
				})
				return err
			}
			first := make(chan struct{})
			errs := make(chan error, writers)
			var wg sync.WaitGroup
			wg.Go(func() { errs <- write(0, first) })
			waitRefs(t, e, th.ID, 1)
			for i := 1; i < writers; i++ {
				wg.Go(func() { errs <- write(i, nil) })
			}
			waitRefs(t, e, th.ID, writers)
			close(first)
			rec.waitHeld(1)
			if remote {
				// The others chain to the held commit and let the
				// thread go, all but the last.
				waitRefs(t, e, th.ID, 1)
			}
			rec.release()
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			rec.mu.Lock()
			packs := strings.Join(rec.packs, "")
			rec.mu.Unlock()
			stored := 0
			for i := range writers {
				n := strings.Count(packs, text(i))
				if n == 0 {
					t.Fatalf("file %d was never stored", i)
				}
				stored += n
			}
			rec.mu.Lock()
			batches := rec.batches
			rec.mu.Unlock()
			if !remote && stored != writers {
				t.Errorf("the %d files' texts were stored %d times, want each once", writers, stored)
			}
			if remote && (stored <= writers || batches > 3) {
				t.Errorf("the %d files' texts were stored %d times in %d Appends: want them chained, in at most 3", writers, stored, batches)
			}
			snap, _, _, err := e.Head(ctx, th.ID)
			if err != nil {
				t.Fatal(err)
			}
			for i := range writers {
				ent, ok, err := snap.Get(ctx, fmt.Sprintf("notes/%02d.md", i))
				if err != nil || !ok || ent.Size != int64(len(text(i))) {
					t.Fatalf("notes/%02d.md at the head: %v %v %+v", i, ok, err, ent)
				}
			}
		})
	}
}
