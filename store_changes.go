package satchel

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// ChangeEvent is what the store's change feed (Store.Watch) reports: a
// thread's new commits, or writes to documents of a store.
type ChangeEvent struct {
	Scope string `json:"scope"`
	// Thread is the thread whose head moved, Seq its new head's sequence
	// number, and Paths the files that differ between the head the feed
	// saw before and this one, in path order. Commits that land between
	// two looks of the feed are reported as one event, at the newest.
	Thread string   `json:"thread,omitempty"`
	Seq    int64    `json:"seq,omitempty"`
	Paths  []string `json:"paths,omitempty"`
	// Store is a document store written, and Keys the keys set or
	// removed there, in key order (only on a backend that logs document
	// changes: backend.Keys, as all of satchel's do).
	Store string   `json:"store,omitempty"`
	Keys  []string `json:"keys,omitempty"`

	docChange int64 // the newest document change reported
}

// Watch calls fn with each change of scope, its threads' commits and its
// documents' writes, made from the moment Watch returns by this process
// or any other on the store's database, until ctx ends: once it has
// ended fn is not called again (a call under way finishes). The backend
// signals a change (backend.ChangeWatcher: PostgreSQL's LISTEN/NOTIFY,
// SQLite's data version, in process on memory); the feed then reads what
// changed from the store itself: the heads of the scope's threads and
// the log of document changes. Without the capability it looks every
// backend.ChangePollInterval. The watchers of one scope share those
// reads; fn is called from a goroutine of the scope's, one event at a
// time, so a slow fn delays that scope's events.
func (s *Store) Watch(ctx context.Context, scope string, fn func(ChangeEvent)) error {
	if err := ValidScope(scope); err != nil {
		return err
	}
	return s.hub().watch(ctx, scope, fn)
}

// hub returns the store's change hub, made on first use.
func (s *Store) hub() *changeHub {
	s.changesOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.changes = &changeHub{s: s, ctx: ctx, stop: cancel, scopes: map[string]*scopeWatch{}}
	})
	return s.changes
}

// changeHub is the store's change feed: the backend's signal, fanned out
// to the watched scopes.
type changeHub struct {
	s    *Store
	ctx  context.Context // ends with the store
	stop context.CancelFunc

	mu     sync.Mutex
	listen context.CancelFunc // ends the backend's watch; nil while none runs
	scopes map[string]*scopeWatch
}

// scopeWatch is one watched scope: what the feed saw of it last, and the
// functions to tell of what changed.
type scopeWatch struct {
	scope string
	wake  chan struct{} // buffered: one pending look
	stop  context.CancelFunc

	// Read by the scope's goroutine only.
	heads  map[string]int64 // thread -> head seq
	cursor int64            // the newest document change seen

	mu       sync.Mutex
	next     int
	watchers map[int]*watcher
}

// watcher is one call of Watch: its function, and where the scope was
// when it began, so that it is told only of what changed after.
type watcher struct {
	ctx    context.Context
	fn     func(ChangeEvent)
	heads  map[string]int64 // nil: the scope's own baseline
	cursor int64
}

// tell calls w's function with e, unless w has ended or e is older than
// w: a watch that joins a scope already watched may see the feed report
// a change made before it began.
func (w *watcher) tell(e ChangeEvent) {
	if w.ctx.Err() != nil {
		return
	}
	if w.heads != nil {
		if e.Thread != "" {
			if head, ok := w.heads[e.Thread]; ok && e.Seq <= head {
				return
			}
		} else if e.docChange <= w.cursor {
			return
		}
	}
	w.fn(e)
}

func (h *changeHub) watch(ctx context.Context, scope string, fn func(ChangeEvent)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.start(); err != nil {
		return err
	}
	w := &watcher{ctx: ctx, fn: fn}
	sw := h.scopes[scope]
	if sw == nil {
		sw = &scopeWatch{scope: scope, wake: make(chan struct{}, 1), watchers: map[int]*watcher{}}
		heads, cursor, err := h.baseline(ctx, scope)
		if err != nil {
			if len(h.scopes) == 0 {
				h.listen()
				h.listen = nil
			}
			return err
		}
		sw.heads, sw.cursor = heads, cursor
		swCtx, cancel := context.WithCancel(h.ctx)
		sw.stop = cancel
		h.scopes[scope] = sw
		go h.run(swCtx, sw)
	} else {
		// The scope's goroutine may not yet have looked at changes made
		// before this call: this watcher skips them.
		heads, cursor, err := h.baseline(ctx, scope)
		if err != nil {
			return err
		}
		w.heads, w.cursor = heads, cursor
	}
	sw.mu.Lock()
	id := sw.next
	sw.next++
	sw.watchers[id] = w
	sw.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		sw.mu.Lock()
		delete(sw.watchers, id)
		empty := len(sw.watchers) == 0
		sw.mu.Unlock()
		if empty && h.scopes[scope] == sw {
			delete(h.scopes, scope)
			sw.stop()
			if len(h.scopes) == 0 && h.listen != nil {
				// Nobody watches: the backend stops listening (on
				// PostgreSQL, its connection is closed).
				h.listen()
				h.listen = nil
			}
		}
	})
	return nil
}

// start starts listening to the backend, unless it listens. h.mu is
// held.
func (h *changeHub) start() error {
	if h.listen != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(h.ctx)
	if cw, ok := backend.As[backend.ChangeWatcher](h.s.b); ok {
		if err := cw.WatchChanges(ctx, h.signal); err != nil {
			cancel()
			return err
		}
	} else {
		go func() {
			t := time.NewTicker(backend.ChangePollInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					h.signal("")
				}
			}
		}()
	}
	h.listen = cancel
	return nil
}

// signal wakes the watchers of scope ("": of every scope).
func (h *changeHub) signal(scope string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, sw := range h.scopes {
		if scope == "" || scope == name {
			select {
			case sw.wake <- struct{}{}:
			default: // a look is pending: it will see this change too
			}
		}
	}
}

// baseline reads what the scope is now: its threads' heads and its
// newest document change.
func (h *changeHub) baseline(ctx context.Context, scope string) (heads map[string]int64, cursor int64, err error) {
	ts, err := h.s.Threads(ctx, scope)
	if err != nil {
		return nil, 0, err
	}
	heads = make(map[string]int64, len(ts))
	for _, t := range ts {
		heads[t.Name] = t.Head
	}
	if k, ok := backend.As[backend.Keys](h.s.b); ok {
		es, err := k.DocChanges(ctx, backend.DocChangeQuery{Scope: scope, Limit: 1})
		if err != nil {
			return nil, 0, err
		}
		if len(es) > 0 {
			cursor = es[0].ID
		}
	}
	return heads, cursor, nil
}

// run looks at the scope each time it is woken, until ctx ends.
func (h *changeHub) run(ctx context.Context, sw *scopeWatch) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sw.wake:
		}
		events, err := h.look(ctx, sw)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Looked at again at the next signal; meanwhile, once more
			// a little later, whatever comes.
			time.AfterFunc(backend.ChangePollInterval, func() {
				select {
				case sw.wake <- struct{}{}:
				default:
				}
			})
		}
		if len(events) == 0 {
			continue
		}
		sw.mu.Lock()
		ws := make([]*watcher, 0, len(sw.watchers))
		for _, w := range sw.watchers {
			ws = append(ws, w)
		}
		sw.mu.Unlock()
		for _, e := range events {
			for _, w := range ws {
				w.tell(e)
			}
		}
	}
}

// maxDocChangesPerLook bounds the document changes one look reads; more
// are read at the next.
const maxDocChangesPerLook = 1000

// look returns what changed in the scope since the last look, and
// remembers what it saw. What it read before an error is returned too.
func (h *changeHub) look(ctx context.Context, sw *scopeWatch) ([]ChangeEvent, error) {
	var events []ChangeEvent
	ts, err := h.s.Threads(ctx, sw.scope)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(ts))
	for _, t := range ts {
		seen[t.Name] = true
		before, known := sw.heads[t.Name]
		if known && before == t.Head {
			continue
		}
		if t.Head == 0 {
			sw.heads[t.Name] = 0
			continue
		}
		if before > t.Head {
			before = 0 // deleted and made anew
		}
		paths, err := h.changedPaths(ctx, sw.scope, t.Name, before, t.Head)
		if err != nil {
			return events, err
		}
		sw.heads[t.Name] = t.Head
		events = append(events, ChangeEvent{Scope: sw.scope, Thread: t.Name, Seq: t.Head, Paths: paths})
	}
	for name := range sw.heads {
		if !seen[name] {
			delete(sw.heads, name) // deleted: its files are no more
		}
	}
	if k, ok := backend.As[backend.Keys](h.s.b); ok {
		es, err := k.DocChanges(ctx, backend.DocChangeQuery{Scope: sw.scope, Limit: maxDocChangesPerLook})
		if err != nil {
			return events, err
		}
		byStore := map[string][]string{}
		newestOf := map[string]int64{}
		var stores []string
		newest := sw.cursor
		for _, e := range es {
			if e.ID <= sw.cursor {
				break // newest first
			}
			newest = max(newest, e.ID)
			newestOf[e.Store] = max(newestOf[e.Store], e.ID)
			if _, ok := byStore[e.Store]; !ok {
				stores = append(stores, e.Store)
			}
			if !slices.Contains(byStore[e.Store], e.Key) {
				byStore[e.Store] = append(byStore[e.Store], e.Key)
			}
		}
		sw.cursor = newest
		slices.Sort(stores)
		for _, st := range stores {
			keys := byStore[st]
			slices.Sort(keys)
			events = append(events, ChangeEvent{Scope: sw.scope, Store: st, Keys: keys, docChange: newestOf[st]})
		}
	}
	return events, nil
}

// changedPaths lists the files that differ between commits from and to
// of a thread; from all of to's files when from is no longer retained.
func (h *changeHub) changedPaths(ctx context.Context, scope, thread string, from, to int64) ([]string, error) {
	ws, err := h.s.Workspace(ctx, scope, thread)
	if err != nil {
		return nil, err
	}
	cs, err := ws.Diff(ctx, strconv.FormatInt(from, 10), strconv.FormatInt(to, 10))
	if errors.Is(err, ErrNotFound) && from != 0 {
		cs, err = ws.Diff(ctx, "0", strconv.FormatInt(to, 10))
	}
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(cs))
	for i, c := range cs {
		paths[i] = c.Path
	}
	return paths, nil
}

// close stops the feed.
func (h *changeHub) close() {
	if h != nil {
		h.stop()
	}
}
