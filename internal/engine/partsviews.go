package engine

import "sync"

// partsViews keeps the views of the packs last read from a backend that
// keeps packs in memory (backend.PartsReader). Such a pack is not copied
// to be read, but its header still has to be parsed, in time linear in its
// objects: reading the files of a commit of 10,000 files one by one parsed
// its header 10,000 times. A view is taken again only for the very pack
// it was made from: the same parts slice (the backend returns the one it
// keeps), or the same string for a pack kept whole, so that a pack
// rewritten by a collection (a new string) is parsed again. Packs are
// immutable otherwise, and a view is read-only: it is shared.
type partsViews struct {
	mu   sync.Mutex
	ents [partsViewsSize]partsView
	next int
}

const partsViewsSize = 8

type partsView struct {
	id    int64
	n     int
	first *string // &parts[0] of a pack of several parts
	whole string  // the pack kept as one string
	v     *packView
}

// get returns the view of parts, the pack id as PackParts returned it,
// if it was made from them.
func (c *partsViews) get(id int64, parts []string) (*packView, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.ents {
		e := &c.ents[i]
		if e.v == nil || e.id != id || e.n != len(parts) {
			continue
		}
		if len(parts) == 1 && e.whole == parts[0] || len(parts) > 1 && e.first == &parts[0] {
			return e.v, true
		}
	}
	return nil, false
}

// put keeps the view of parts, in place of the oldest kept.
func (c *partsViews) put(id int64, parts []string, v *packView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := partsView{id: id, n: len(parts), v: v}
	if len(parts) == 1 {
		e.whole = parts[0]
	} else {
		e.first = &parts[0]
	}
	c.ents[c.next] = e
	c.next = (c.next + 1) % partsViewsSize
}
