package engine

import (
	"container/list"
	"sync"
)

// lru is a size-bounded least-recently-used cache. Everything the engine
// caches is immutable (packs and the nodes decoded from them, named by
// Ref), so a cached value is never stale, even with other processes writing
// the same database.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int64
	size  int64
	m     map[K]*list.Element
	order list.List
}

type lruItem[K comparable, V any] struct {
	key  K
	val  V
	cost int64
}

func newLRU[K comparable, V any](max int64) *lru[K, V] {
	return &lru[K, V]{max: max, m: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	el, ok := c.m[k]
	if !ok {
		c.mu.Unlock()
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	v := el.Value.(*lruItem[K, V]).val
	c.mu.Unlock()
	return v, true
}

func (c *lru[K, V]) put(k K, v V, cost int64) {
	if cost > c.max/4 {
		return // too big to be worth evicting everything else for
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		it := el.Value.(*lruItem[K, V])
		c.size += cost - it.cost
		it.val, it.cost = v, cost
		c.order.MoveToFront(el)
	} else {
		c.m[k] = c.order.PushFront(&lruItem[K, V]{key: k, val: v, cost: cost})
		c.size += cost
	}
	for c.size > c.max {
		el := c.order.Back()
		it := el.Value.(*lruItem[K, V])
		c.order.Remove(el)
		delete(c.m, it.key)
		c.size -= it.cost
	}
}

func (c *lru[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		it := el.Value.(*lruItem[K, V])
		c.order.Remove(el)
		delete(c.m, k)
		c.size -= it.cost
	}
}
