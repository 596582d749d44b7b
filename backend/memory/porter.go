package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.Porter = (*Backend)(nil)

// SetCommitTime implements backend.Porter.
func (b *Backend) SetCommitTime(ctx context.Context, thread, seq int64, t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed
	}
	th, ok := b.threads[thread]
	if !ok {
		return backend.ErrNoCommit
	}
	i, ok := th.find(seq)
	if !ok {
		return backend.ErrNoCommit
	}
	th.log[i].Time = t.UTC()
	return nil
}

// SetThreadCreated implements backend.Porter.
func (b *Backend) SetThreadCreated(ctx context.Context, thread int64, t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed
	}
	th, ok := b.threads[thread]
	if !ok {
		return backend.ErrNoThread
	}
	th.info.Created = t.UTC()
	return nil
}

// PutDocVersions implements backend.Porter.
func (b *Backend) PutDocVersions(ctx context.Context, id backend.DocID, versions []backend.Doc) error {
	if len(versions) == 0 {
		return errors.New("memory: put document versions: no versions")
	}
	if _, err := b.docsNow(); err != nil {
		return err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.part(id.Store, id.Scope, true)
	vs := make([]backend.Doc, len(versions))
	for i, v := range versions {
		vs[i] = backend.Doc{Key: id.Key, Version: v.Version, Updated: v.Updated.UTC(), Expires: v.Expires, Map: v.Map}
		if i > 0 {
			vs[i].Expires = time.Time{}
		}
	}
	if !vs[0].Expires.IsZero() {
		vs[0].Expires = vs[0].Expires.UTC()
	}
	d := p.docs[id.Key]
	if d != nil {
		p.unindex(id.Key, d)
	} else {
		d = &memDoc{}
		p.docs[id.Key] = d
		p.keys.insert(id.Key, d)
	}
	d.cur, d.doc, d.hist = vs[0], vs[0].Map, nil
	if len(vs) > 1 {
		d.hist = vs[1:]
	}
	p.indexDoc(id.Key, d)
	return nil
}

// DocScopes implements backend.Porter.
func (b *Backend) DocScopes(ctx context.Context, store string) ([]string, error) {
	if _, err := b.docsNow(); err != nil {
		return nil, err
	}
	s := &b.docs
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for k, p := range s.parts {
		if k.store == store && len(p.docs) > 0 {
			out = append(out, k.scope)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DocStores lists the stores that hold documents (backend.Porter).
func (b *Backend) DocStores(ctx context.Context) ([]string, error) {
	if _, err := b.docsNow(); err != nil {
		return nil, err
	}
	s := &b.docs
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for k, p := range s.parts {
		if len(p.docs) > 0 && !slices.Contains(out, k.store) {
			out = append(out, k.store)
		}
	}
	slices.Sort(out)
	return out, nil
}

var _ backend.DocCounter = (*Backend)(nil)

// DocsByScope counts the documents of every store of every scope
// (backend.DocCounter).
func (b *Backend) DocsByScope(ctx context.Context) ([]backend.ScopeDocs, error) {
	if _, err := b.docsNow(); err != nil {
		return nil, err
	}
	s := &b.docs
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := map[partKey]*backend.ScopeDocs{}
	for k, p := range s.parts {
		if len(p.docs) == 0 {
			continue
		}
		d := m[k]
		if d == nil {
			d = &backend.ScopeDocs{Scope: k.scope, Store: k.store}
			m[k] = d
		}
		d.Docs += int64(len(p.docs))
		for _, doc := range p.docs {
			if doc.cur.Updated.After(d.Updated) {
				d.Updated = doc.cur.Updated
			}
		}
	}
	out := make([]backend.ScopeDocs, 0, len(m))
	for _, d := range m {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b backend.ScopeDocs) int {
		if c := strings.Compare(a.Scope, b.Scope); c != 0 {
			return c
		}
		return strings.Compare(a.Store, b.Store)
	})
	return out, nil
}
