package satcheltest

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// Hide returns b with capability T hidden: backend.As finds T neither on
// the result nor below it, and finds every other capability of b as
// before. Hide several by nesting: Hide[backend.Remote](Hide[backend.Forker](b)).
// Run hides each capability a backend offers itself; Hide is for a test
// that needs a backend without one.
func Hide[T any](b backend.Backend) backend.Backend {
	return hidden[T]{b}
}

// hidden is a backend with capability T hidden. It embeds the Backend
// interface, so its own method set is the contract's alone; every other
// capability backend.As finds by unwrapping it.
type hidden[T any] struct{ backend.Backend }

// Unwrap returns the backend hidden wraps.
func (h hidden[T]) Unwrap() backend.Backend { return h.Backend }

// Hides reports whether capability is T.
func (hidden[T]) Hides(capability any) bool {
	_, ok := capability.(*T)
	return ok
}

// A capability is an optional capability of the contract
// (backend/capabilities.go) that satchel has a fallback for: Run runs the
// suite again with it hidden on every backend that offers it.
type capability struct {
	name string
	has  func(backend.Backend) bool
	hide func(backend.Backend) backend.Backend
	// run is the part of the suite the fallback is proven by.
	run func(t *testing.T, open func(t *testing.T) backend.Backend)
}

func hiding[T any](name string, run func(t *testing.T, open func(t *testing.T) backend.Backend)) capability {
	return capability{
		name: name,
		has:  func(b backend.Backend) bool { _, ok := backend.As[T](b); return ok },
		hide: Hide[T],
		run:  run,
	}
}

// capabilities lists what Run hides, in the order it hides them.
var capabilities = []capability{
	hiding[backend.Forker]("Forker", runWhole),
	hiding[backend.CheckpointResolver]("CheckpointResolver", runWhole),
	hiding[backend.PartsAppender]("PartsAppender", runWhole),
	hiding[backend.PartsReader]("PartsReader", runWhole),
	hiding[backend.PacksReader]("PacksReader", runWhole),
	hiding[backend.Vacuumer]("Vacuumer", runWhole),
	hiding[backend.DocMaps]("DocMaps", runWhole),
	hiding[backend.HeadsLister]("HeadsLister", runWhole),
	hiding[backend.DocCounter]("DocCounter", runWhole),
	hiding[backend.DocBatcher]("DocBatcher", RunDocuments),
	// Both make the engine treat the backend as a server a round trip
	// away; without them it commits as on an embedded one.
	{
		name: "ConcurrentAppenderNoRemote",
		has: func(b backend.Backend) bool {
			_, ca := backend.As[backend.ConcurrentAppender](b)
			_, r := backend.As[backend.Remote](b)
			return ca || r
		},
		hide: func(b backend.Backend) backend.Backend {
			return Hide[backend.Remote](Hide[backend.ConcurrentAppender](b))
		},
		run: runWhole,
	},
	hiding[backend.Keys]("Keys", runWhole),
	hiding[backend.ThreadLocker]("ThreadLocker", runWhole),
	hiding[backend.ChangeWatcher]("ChangeWatcher", RunChanges),
}

// runHidden runs, for each capability that a backend from open offers, the
// part of the suite that proves its fallback, with it hidden, side by side.
func runHidden(t *testing.T, open func(t *testing.T) backend.Backend) {
	probe := open(t)
	for _, c := range capabilities {
		if !c.has(probe) {
			continue
		}
		t.Run("No"+c.name, func(t *testing.T) {
			t.Parallel()
			if c.has(c.hide(probe)) {
				t.Fatalf("%s is not hidden", c.name)
			}
			c.run(t, func(t *testing.T) backend.Backend { return c.hide(open(t)) })
		})
	}
}
