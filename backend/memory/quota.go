package memory

import (
	"context"
	"slices"
	"sort"

	"github.com/satchel-dev/satchel/backend"
)

// size returns the pack's length.
func (p *pack) size() int {
	if p.parts == nil {
		return len(p.data)
	}
	n := 0
	for _, s := range p.parts {
		n += len(s)
	}
	return n
}

// heads returns the threads of a scope with their heads, by id.
func (b *Backend) scopeHeads(scope string) ([]*thread, []backend.Commit) {
	var ts []*thread
	for k, id := range b.byName {
		if k.scope == scope {
			ts = append(ts, b.threads[id])
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].info.ID < ts[j].info.ID })
	heads := make([]backend.Commit, len(ts))
	for i, t := range ts {
		if len(t.log) > 0 {
			heads[i] = t.log[len(t.log)-1]
		} else {
			heads[i] = backend.Commit{Thread: t.info.ID}
		}
	}
	return ts, heads
}

// countLocked counts what b.mu guards of a scope's usage (not its live
// files and bytes).
func (b *Backend) countLocked(scope string, ts []*thread) backend.Usage {
	u := backend.Usage{Threads: int64(len(ts))}
	for _, p := range b.packs {
		if p.scope == scope {
			u.HistoryBytes += int64(p.size())
		}
	}
	return u
}

// SetQuota implements backend.Quotas. A scope's first row is counted
// optimistically: heads are read under the lock, counted without it (live
// reads packs), and the row is inserted only if, under the lock again,
// the scope's heads are still those counted; else it counts again.
func (b *Backend) SetQuota(ctx context.Context, scope string, limits backend.Usage, live backend.LiveFunc) error {
	for {
		// b.docs.mu is taken before b.mu, as document writes take them.
		b.docs.mu.Lock()
		b.mu.Lock()
		if b.closed {
			b.docs.mu.Unlock()
			b.mu.Unlock()
			return errClosed
		}
		if limits.Unlimited() {
			delete(b.quotas, scope)
			b.mu.Unlock()
			b.docs.mu.Unlock()
			return nil
		}
		if q := b.quotas[scope]; q != nil {
			q.Limits = limits
			b.mu.Unlock()
			b.docs.mu.Unlock()
			return nil
		}
		_, heads := b.scopeHeads(scope)
		b.mu.Unlock()
		b.docs.mu.Unlock()
		files, bytes, err := live(ctx, heads)
		if err != nil {
			return err
		}
		// Documents change under their own lock: held while the row is
		// inserted, no document of the scope is made or removed.
		b.docs.mu.Lock()
		b.mu.Lock()
		ts, now := b.scopeHeads(scope)
		if !slices.EqualFunc(heads, now, func(a, c backend.Commit) bool { return a.Thread == c.Thread && a.ID == c.ID }) {
			b.mu.Unlock()
			b.docs.mu.Unlock()
			continue
		}
		q := &backend.Quota{Scope: scope, Limits: limits, Used: b.countLocked(scope, ts)}
		for k, p := range b.docs.parts {
			if k.scope == scope {
				q.Used.Documents += int64(len(p.docs))
			}
		}
		for i, t := range ts {
			t.headFiles, t.headBytes = files[i], bytes[i]
			q.Used.Files += files[i]
			q.Used.Bytes += bytes[i]
		}
		if b.quotas == nil {
			b.quotas = map[string]*backend.Quota{}
		}
		b.quotas[scope] = q
		b.mu.Unlock()
		b.docs.mu.Unlock()
		return nil
	}
}

// Quotas implements backend.Quotas.
func (b *Backend) Quotas(ctx context.Context, scope string) ([]backend.Quota, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []backend.Quota
	for s, q := range b.quotas {
		if scope == "" || s == scope {
			out = append(out, *q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Scope < out[j].Scope })
	return out, nil
}

// CountUsage implements backend.Quotas.
func (b *Backend) CountUsage(ctx context.Context, scope string, live backend.LiveFunc) (backend.Usage, *backend.Quota, error) {
	b.docs.mu.RLock()
	b.mu.RLock()
	ts, heads := b.scopeHeads(scope)
	u := b.countLocked(scope, ts)
	for k, p := range b.docs.parts {
		if k.scope == scope {
			u.Documents += int64(len(p.docs))
		}
	}
	var row *backend.Quota
	if q := b.quotas[scope]; q != nil {
		c := *q
		row = &c
	}
	b.mu.RUnlock()
	b.docs.mu.RUnlock()
	files, bytes, err := live(ctx, heads)
	if err != nil {
		return u, row, err
	}
	for i := range files {
		u.Files += files[i]
		u.Bytes += bytes[i]
	}
	return u, row, nil
}
