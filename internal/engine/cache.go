package engine

import "sync"

// lru is a size-bounded least-recently-used cache. Everything the engine
// caches is immutable (packs and the nodes decoded from them, named by
// Ref), so a cached value is never stale, even with other processes writing
// the same database. Its list is intrusive (one allocation an entry: every
// commit puts its pack and nodes).
type lru[K comparable, V any] struct {
	mu   sync.Mutex
	max  int64
	size int64
	m    map[K]*lruItem[K, V]
	root lruItem[K, V] // root.next is the most recently used, root.prev the least
}

type lruItem[K comparable, V any] struct {
	key        K
	val        V
	cost       int64
	prev, next *lruItem[K, V]
}

func newLRU[K comparable, V any](max int64) *lru[K, V] {
	c := &lru[K, V]{max: max, m: map[K]*lruItem[K, V]{}}
	c.root.prev, c.root.next = &c.root, &c.root
	return c
}

func (c *lru[K, V]) unlink(it *lruItem[K, V]) {
	it.prev.next, it.next.prev = it.next, it.prev
}

func (c *lru[K, V]) pushFront(it *lruItem[K, V]) {
	it.prev, it.next = &c.root, c.root.next
	c.root.next.prev = it
	c.root.next = it
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	it, ok := c.m[k]
	if !ok {
		c.mu.Unlock()
		var zero V
		return zero, false
	}
	if c.root.next != it {
		c.unlink(it)
		c.pushFront(it)
	}
	v := it.val
	c.mu.Unlock()
	return v, true
}

func (c *lru[K, V]) put(k K, v V, cost int64) {
	if cost > c.max/4 {
		return // too big to be worth evicting everything else for
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.m[k]; ok {
		c.size += cost - it.cost
		it.val, it.cost = v, cost
		c.unlink(it)
		c.pushFront(it)
	} else {
		it := &lruItem[K, V]{key: k, val: v, cost: cost}
		c.m[k] = it
		c.pushFront(it)
		c.size += cost
	}
	for c.size > c.max {
		it := c.root.prev
		c.unlink(it)
		delete(c.m, it.key)
		c.size -= it.cost
	}
}

func (c *lru[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.m[k]; ok {
		c.unlink(it)
		delete(c.m, k)
		c.size -= it.cost
	}
}
