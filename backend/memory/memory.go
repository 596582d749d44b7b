// Package memory is the reference backend: everything in the process's
// memory, nothing on disk, gone when the process ends. It is the simplest
// correct implementation of the backend contract, and the fastest.
package memory

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/satchel-dev/satchel/backend"
)

// Backend is an in-memory backend. The zero value is not usable; call New.
type Backend struct {
	mu       sync.RWMutex
	nextID   int64 // thread and commit ids share one counter: never reused
	threads  map[int64]*thread
	byName   map[scopeName]int64
	packs    map[int64]*pack
	settings map[settingKey][]byte
	closed   bool
	docs     docStore                  // collections (docs.go)
	quotas   map[string]*backend.Quota // by scope (quota.go)
	keysMu   sync.Mutex
	keys     keyStore // idempotency keys, document changes (keys.go)
	// clock is overridable for tests.
	clock backend.Clock
	// changed tells the watchers of changes (WatchChanges).
	changed backend.Signal
}

type scopeName struct{ scope, name string }

type settingKey struct{ scope, thread, key string }

type thread struct {
	info backend.Thread
	log  []backend.Commit // retained commits, ascending seq
	head int64            // sequence number of the newest commit ever stored
	// headFiles and headBytes are the totals of the head's tree
	// (NewCommit.Files and Bytes), for the quota of the thread's scope.
	headFiles, headBytes int64
	checkpoints          map[string]int64
	// git is the thread's git map (git.go), deleted with it.
	git gitMap
}

type pack struct {
	scope string
	data  string
	// parts, when not nil, is the pack as the engine built it (AppendParts):
	// data is their concatenation, made when first asked for.
	parts   []string
	dropped bool
	droppAt time.Time
}

// New returns an empty in-memory backend.
func New() *Backend {
	return &Backend{
		threads:  map[int64]*thread{},
		byName:   map[scopeName]int64{},
		packs:    map[int64]*pack{},
		settings: map[settingKey][]byte{},
		clock:    time.Now,
	}
}

// SetClock replaces the backend's clock, for commits, retention, grace
// periods and documents alike (backend.ClockSetter); nil restores the
// process's clock.
func (b *Backend) SetClock(now backend.Clock) {
	if now == nil {
		now = time.Now
	}
	b.mu.Lock()
	b.clock = now
	b.mu.Unlock()
}

func (b *Backend) now() time.Time { return b.clock().UTC() }

func (b *Backend) Now(ctx context.Context) (time.Time, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.now(), nil
}

func (b *Backend) Scopes(ctx context.Context) ([]string, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for k := range b.byName {
		if !seen[k.scope] {
			seen[k.scope] = true
			out = append(out, k.scope)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (b *Backend) Thread(ctx context.Context, scope, name string, create bool) (backend.Thread, error) {
	b.mu.RLock()
	id, ok := b.byName[scopeName{scope, name}]
	if ok {
		t := b.threads[id].info
		b.mu.RUnlock()
		return t, nil
	}
	b.mu.RUnlock()
	if !create {
		return backend.Thread{}, backend.ErrNoThread
	}
	t, err := b.CreateThread(ctx, scope, name)
	if err == backend.ErrThreadExists {
		return b.Thread(ctx, scope, name, false)
	}
	return t, err
}

func (b *Backend) CreateThread(ctx context.Context, scope, name string) (backend.Thread, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byName[scopeName{scope, name}]; ok {
		return backend.Thread{}, backend.ErrThreadExists
	}
	if q := b.quotas[scope]; q != nil {
		if err := q.Add(backend.Usage{Threads: 1}); err != nil {
			return backend.Thread{}, err
		}
	}
	b.nextID++
	t := &thread{
		info:        backend.Thread{ID: b.nextID, Scope: scope, Name: name, Created: b.now()},
		checkpoints: map[string]int64{},
	}
	b.threads[t.info.ID] = t
	b.byName[scopeName{scope, name}] = t.info.ID
	return t.info, nil
}

func (b *Backend) Threads(ctx context.Context, scope string) ([]backend.Thread, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []backend.Thread
	for k, id := range b.byName {
		if k.scope == scope {
			out = append(out, b.threads[id].info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ThreadHeads lists a scope's threads with their heads
// (backend.HeadsLister).
func (b *Backend) ThreadHeads(ctx context.Context, scope string) ([]backend.ThreadHead, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var ts []*thread
	for k, id := range b.byName {
		if k.scope == scope {
			ts = append(ts, b.threads[id])
		}
	}
	slices.SortFunc(ts, func(a, b *thread) int { return strings.Compare(a.info.Name, b.info.Name) })
	out := make([]backend.ThreadHead, len(ts))
	for i, t := range ts {
		out[i].Thread = t.info
		if len(t.log) > 0 {
			out[i].Head = t.log[len(t.log)-1]
		}
	}
	return out, nil
}

func (b *Backend) DeleteThread(ctx context.Context, id int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.threads[id]
	if !ok {
		return backend.ErrNoThread
	}
	now := b.now()
	for _, c := range t.log {
		b.dropPack(c.ID, now)
	}
	if q := b.quotas[t.info.Scope]; q != nil {
		q.Used.Threads--
		q.Used.Files -= t.headFiles
		q.Used.Bytes -= t.headBytes
	}
	delete(b.threads, id)
	delete(b.byName, scopeName{t.info.Scope, t.info.Name})
	for k := range b.settings {
		if k.scope == t.info.Scope && k.thread == t.info.Name {
			delete(b.settings, k)
		}
	}
	return nil
}

func (b *Backend) dropPack(id int64, now time.Time) {
	if p, ok := b.packs[id]; ok && !p.dropped {
		p.dropped = true
		p.droppAt = now
	}
}

func (b *Backend) PurgeScope(ctx context.Context, scope string) error {
	b.docs.mu.Lock()
	for k := range b.docs.parts {
		if k.scope == scope {
			delete(b.docs.parts, k)
		}
	}
	b.docs.mu.Unlock()
	b.keysMu.Lock()
	for k := range b.keys.keys {
		if k.scope == scope {
			delete(b.keys.keys, k)
		}
	}
	b.keysMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, id := range b.byName {
		if k.scope == scope {
			delete(b.threads, id)
			delete(b.byName, k)
		}
	}
	for id, p := range b.packs {
		if p.scope == scope {
			delete(b.packs, id)
		}
	}
	for k := range b.settings {
		if k.scope == scope {
			delete(b.settings, k)
		}
	}
	delete(b.quotas, scope)
	return nil
}

func (b *Backend) Head(ctx context.Context, id int64) (backend.Commit, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	t, ok := b.threads[id]
	if !ok {
		return backend.Commit{}, false, backend.ErrNoThread
	}
	if len(t.log) == 0 {
		return backend.Commit{}, false, nil
	}
	return t.log[len(t.log)-1], true, nil
}

func (t *thread) find(seq int64) (int, bool) {
	return slices.BinarySearchFunc(t.log, seq, func(c backend.Commit, s int64) int {
		switch {
		case c.Seq < s:
			return -1
		case c.Seq > s:
			return 1
		}
		return 0
	})
}

func (b *Backend) CommitAt(ctx context.Context, id, seq int64) (backend.Commit, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	t, ok := b.threads[id]
	if !ok {
		return backend.Commit{}, backend.ErrNoThread
	}
	i, ok := t.find(seq)
	if !ok {
		return backend.Commit{}, backend.ErrNoCommit
	}
	return t.log[i], nil
}

func (b *Backend) Log(ctx context.Context, id, before int64, limit int) ([]backend.Commit, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	t, ok := b.threads[id]
	if !ok {
		return nil, backend.ErrNoThread
	}
	var out []backend.Commit
	for i := len(t.log) - 1; i >= 0; i-- {
		c := t.log[i]
		if before > 0 && c.Seq >= before {
			continue
		}
		out = append(out, c)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

func (b *Backend) Append(ctx context.Context, commits []backend.NewCommit) ([]backend.AppendResult, error) {
	defer b.changed.Notify("")
	return b.append(commits, nil)
}

// AppendParts is Append with commit i's pack given as packs[i]: strings
// whose concatenation is the pack (commits[i].Pack is ignored). The
// strings are kept as they are, never copied, and joined only if the pack
// is read (backend.PartsAppender): the engine's writes then neither copy
// file content into a pack nor allocate one.
func (b *Backend) AppendParts(ctx context.Context, commits []backend.NewCommit, packs [][]string) ([]backend.AppendResult, error) {
	defer b.changed.Notify("")
	return b.append(commits, packs)
}

// WatchChanges implements backend.ChangeWatcher: a memory store changes
// only in its process.
func (b *Backend) WatchChanges(ctx context.Context, changed func(scope string)) error {
	b.changed.Watch(ctx, changed)
	return nil
}

func (b *Backend) append(commits []backend.NewCommit, parts [][]string) ([]backend.AppendResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	now := b.now()
	res := make([]backend.AppendResult, len(commits))
	for i, nc := range commits {
		t, ok := b.threads[nc.Thread]
		if !ok {
			res[i].Err = backend.ErrNoThread
			continue
		}
		if nc.Chained && !backend.ChainHolds(commits, res, i) {
			res[i].Err = backend.ErrStale
			continue
		}
		if nc.Seq != t.head+1 {
			res[i].Err = backend.ErrStale
			if n := len(t.log); n > 0 && t.log[n-1].Seq >= nc.Seq {
				res[i].Head = t.log[n-1]
			}
			continue
		}
		if r := nc.Requires; r != nil {
			src, ok := b.threads[r.Thread]
			if !ok {
				res[i].Err = backend.ErrNotRetained
				continue
			}
			if _, ok := src.find(r.Seq); !ok {
				res[i].Err = backend.ErrNotRetained
				continue
			}
		}
		if nc.Checkpoint != "" {
			if _, taken := t.checkpoints[nc.Checkpoint]; taken {
				res[i].Err = backend.ErrCheckpointExists
				continue
			}
		}
		var added backend.Usage // what the commit adds to its scope's quota
		q := b.quotas[t.info.Scope]
		if q != nil {
			n := len(nc.Pack)
			if parts != nil {
				n = 0
				for _, s := range parts[i] {
					n += len(s)
				}
			}
			added = backend.Usage{Files: nc.DeltaFiles, Bytes: nc.DeltaBytes, HistoryBytes: int64(n)}
			if err := q.Add(added); err != nil {
				res[i].Err = err
				continue
			}
		}
		if nc.Key != nil && !b.claimKey(nc.Key, nc.Thread, nc.Seq, now) {
			if q != nil { // nothing is stored: take the usage back
				_ = q.Add(backend.Usage{Files: -added.Files, Bytes: -added.Bytes, HistoryBytes: -added.HistoryBytes})
			}
			res[i].Err = backend.ErrKeyUsed
			continue
		}
		b.nextID++
		c := backend.Commit{
			ID:     b.nextID,
			Thread: nc.Thread,
			Seq:    nc.Seq,
			Root:   slices.Clone(nc.Root),
			Meta:   slices.Clone(nc.Meta),
			Time:   now,
		}
		// NewCommit.Pack is never modified after Append: keep it uncopied.
		p := &pack{scope: t.info.Scope}
		switch {
		case parts == nil:
			p.data = unsafe.String(unsafe.SliceData(nc.Pack), len(nc.Pack))
		case len(parts[i]) == 1:
			p.data = parts[i][0]
		case len(parts[i]) > 1:
			p.parts = parts[i]
		}
		b.packs[c.ID] = p
		t.log = append(t.log, c)
		t.head = nc.Seq
		t.headFiles, t.headBytes = nc.Files, nc.Bytes
		if nc.Checkpoint != "" {
			t.checkpoints[nc.Checkpoint] = nc.Seq
		}
		res[i].Commit = c
	}
	return res, nil
}

// claimKey claims c for a write about to be stored, or reports that it
// is live.
func (b *Backend) claimKey(c *backend.KeyClaim, thread, seq int64, now time.Time) bool {
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	if _, ok := b.keys.live(c.Scope, c.Thread, c.Key, now); ok {
		return false
	}
	b.keys.claim(c, thread, seq, now)
	return true
}

func (b *Backend) Pack(ctx context.Context, id int64) (string, error) {
	b.mu.RLock()
	p, ok := b.packs[id]
	if !ok {
		b.mu.RUnlock()
		return "", backend.ErrNoPack
	}
	data, joined := p.data, p.parts == nil
	b.mu.RUnlock()
	if joined {
		return data, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.parts != nil {
		p.data, p.parts = strings.Join(p.parts, ""), nil
	}
	return p.data, nil
}

// PackParts returns a pack as it is kept (backend.PartsReader): the parts
// AppendParts was given, or one string. Nothing is joined or copied.
func (b *Backend) PackParts(ctx context.Context, id int64) ([]string, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	p, ok := b.packs[id]
	if !ok {
		return nil, backend.ErrNoPack
	}
	if p.parts != nil {
		return p.parts, nil
	}
	return []string{p.data}, nil
}

func (b *Backend) SetCheckpoint(ctx context.Context, id int64, name string, seq int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.threads[id]
	if !ok {
		return backend.ErrNoThread
	}
	if _, ok := t.find(seq); !ok {
		return backend.ErrNoCommit
	}
	if _, taken := t.checkpoints[name]; taken {
		return backend.ErrCheckpointExists
	}
	t.checkpoints[name] = seq
	return nil
}

func (b *Backend) Checkpoints(ctx context.Context, id int64) ([]backend.Checkpoint, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	t, ok := b.threads[id]
	if !ok {
		return nil, backend.ErrNoThread
	}
	out := make([]backend.Checkpoint, 0, len(t.checkpoints))
	for n, s := range t.checkpoints {
		out = append(out, backend.Checkpoint{Name: n, Seq: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seq != out[j].Seq {
			return out[i].Seq > out[j].Seq
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (b *Backend) CheckpointSeq(ctx context.Context, id int64, name string) (int64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	t, ok := b.threads[id]
	if !ok {
		return 0, backend.ErrNoThread
	}
	s, ok := t.checkpoints[name]
	if !ok {
		return 0, backend.ErrNoCheckpoint
	}
	return s, nil
}

func (b *Backend) Drop(ctx context.Context, id int64, seqs []int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.threads[id]
	if !ok {
		return backend.ErrNoThread
	}
	drop := map[int64]bool{}
	for _, s := range seqs {
		drop[s] = true
	}
	now := b.now()
	kept := t.log[:0]
	for _, c := range t.log {
		if drop[c.Seq] {
			b.dropPack(c.ID, now)
			continue
		}
		kept = append(kept, c)
	}
	clear(t.log[len(kept):])
	t.log = kept
	for n, s := range t.checkpoints {
		if drop[s] {
			delete(t.checkpoints, n)
		}
	}
	return nil
}

func (b *Backend) GCSnapshot(ctx context.Context, scope string, cutoff time.Time) (backend.GCSnapshot, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var s backend.GCSnapshot
	for k, id := range b.byName {
		if k.scope != scope {
			continue
		}
		for _, c := range b.threads[id].log {
			s.Retained = append(s.Retained, c)
		}
	}
	for id, p := range b.packs {
		if p.scope == scope && p.dropped && p.droppAt.Before(cutoff) {
			s.Dropped = append(s.Dropped, id)
		}
	}
	slices.Sort(s.Dropped)
	return s, nil
}

func (b *Backend) DeletePacks(ctx context.Context, ids []int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		if p, ok := b.packs[id]; ok && p.dropped {
			if q := b.quotas[p.scope]; q != nil {
				q.Used.HistoryBytes -= int64(p.size())
			}
			delete(b.packs, id)
		}
	}
	return nil
}

func (b *Backend) RewritePack(ctx context.Context, id int64, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.packs[id]; ok && p.dropped {
		if q := b.quotas[p.scope]; q != nil {
			q.Used.HistoryBytes += int64(len(data) - p.size())
		}
		p.data, p.parts = string(data), nil
	}
	return nil
}

func (b *Backend) Setting(ctx context.Context, scope, thread, key string) ([]byte, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	v, ok := b.settings[settingKey{scope, thread, key}]
	return slices.Clone(v), ok, nil
}

func (b *Backend) PutSetting(ctx context.Context, scope, thread, key string, v []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := settingKey{scope, thread, key}
	if v == nil {
		delete(b.settings, k)
	} else {
		b.settings[k] = slices.Clone(v)
	}
	return nil
}

func (b *Backend) Settings(ctx context.Context, scope, thread, prefix string) (map[string][]byte, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := map[string][]byte{}
	for k, v := range b.settings {
		if k.scope == scope && k.thread == thread && strings.HasPrefix(k.key, prefix) {
			out[k.key] = slices.Clone(v)
		}
	}
	return out, nil
}

func (b *Backend) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

type closedError struct{}

func (closedError) Error() string { return "memory backend: closed" }

var errClosed error = closedError{}

var (
	_ backend.Backend       = (*Backend)(nil)
	_ backend.PartsAppender = (*Backend)(nil)
	_ backend.PartsReader   = (*Backend)(nil)
	_ backend.ClockSetter   = (*Backend)(nil)
	_ backend.HeadsLister   = (*Backend)(nil)
)
