package satchel

import (
	"context"
	"errors"
	"sync"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Fanout runs arms concurrently against the workspace (DESIGN §2.5). Each
// arm gets its own *Workspace handle on the same thread. Two arms that both
// write, edit, move or delete one path, or that append to a path another
// arm writes, race: the arm that comes second gets an ErrWriteRace error
// and its mutation is not applied. Appends from several arms to one path
// are legal. Fanout waits for every arm and returns their errors joined
// (races included).
func (w *Workspace) Fanout(ctx context.Context, arms ...func(ctx context.Context, ws *Workspace) error) error {
	if w.rv != nil {
		rw, err := w.changing(ctx)
		if err != nil {
			return err
		}
		return rw.Fanout(ctx, arms...)
	}
	rec := &fanoutRecord{paths: map[string]claimState{}}
	errsOut := make([]error, len(arms))
	var wg sync.WaitGroup
	for i, fn := range arms {
		aw := &Workspace{s: w.s, scope: w.scope, thread: w.thread, actor: w.actor, limits: w.limits,
			arm: &arm{id: i + 1, rec: rec}, reads: w.reads, only: w.only, gate: w.gate, ref: w.ref, rv: w.rv, home: w.home, notes: w.notes}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errsOut[i] = fn(ctx, aw)
		}()
	}
	wg.Wait()
	return errors.Join(errsOut...)
}

// arm is one arm of a fanout.
type arm struct {
	id  int
	rec *fanoutRecord
}

type claimKind int

const (
	claimWrite claimKind = iota + 1
	claimAppend
)

// claimState records which arms touched a path and how.
type claimState struct {
	writer   int          // the arm that wrote it (0: none)
	appender map[int]bool // arms that appended
}

type fanoutRecord struct {
	mu    sync.Mutex
	paths map[string]claimState
}

// claim records that the batch's arm is about to write or append path,
// refusing a race with another arm. Mutations of one thread run one at a
// time (the engine's thread lock), so the claim is checked against every
// mutation that committed before.
func (b *Batch) claim(path string, kind claimKind) error {
	a := b.w.arm
	if a == nil {
		return nil
	}
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	st := a.rec.paths[path]
	other := st.writer != 0 && st.writer != a.id
	if kind == claimWrite {
		for id := range st.appender {
			if id != a.id {
				other = true
			}
		}
	}
	if other {
		return errs.New(errs.ErrWriteRace, "write-write race on %s: another arm of the same fanout already wrote it", path)
	}
	if kind == claimWrite && st.writer == 0 {
		st.writer = a.id
		b.claimed = append(b.claimed, path+"\x00w")
	}
	if kind == claimAppend && !st.appender[a.id] {
		if st.appender == nil {
			st.appender = map[int]bool{}
		}
		st.appender[a.id] = true
		b.claimed = append(b.claimed, path+"\x00a")
	}
	a.rec.paths[path] = st
	return nil
}

// abandon undoes the claims of a batch whose commit did not happen.
func (b *Batch) abandon() {
	a := b.w.arm
	if a == nil || len(b.claimed) == 0 {
		return
	}
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	for _, c := range b.claimed {
		path, kind := c[:len(c)-2], c[len(c)-1]
		st := a.rec.paths[path]
		if kind == 'w' && st.writer == a.id {
			st.writer = 0
		}
		if kind == 'a' {
			delete(st.appender, a.id)
		}
		a.rec.paths[path] = st
	}
	b.claimed = nil
}
