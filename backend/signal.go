package backend

import (
	"context"
	"sync"
)

// Signal tells the watchers of one backend, in this process, that a
// scope changed: the in-process part of a ChangeWatcher. The zero value
// is ready; a nil *Signal ignores Notify.
type Signal struct {
	mu   sync.Mutex
	next int
	subs map[int]func(scope string)
}

// Notify calls each watcher with scope ("" when it is not known).
func (s *Signal) Notify(scope string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if len(s.subs) == 0 {
		s.mu.Unlock()
		return
	}
	fns := make([]func(string), 0, len(s.subs))
	for _, fn := range s.subs {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(scope)
	}
}

// Watch adds changed as a watcher until ctx ends.
func (s *Signal) Watch(ctx context.Context, changed func(scope string)) {
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[int]func(string){}
	}
	id := s.next
	s.next++
	s.subs[id] = changed
	s.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	})
}
