package memory_test

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/satcheltest"
)

// TestConformance runs the whole suite on the memory backend, then again
// with each of its optional capabilities hidden, so that the paths satchel
// takes without them are proven on it too.
func TestConformance(t *testing.T) {
	satcheltest.Run(t, func(t *testing.T) backend.Backend { return memory.New() })
	hidden := []struct {
		name string
		open func() backend.Backend
	}{
		{"NoPartsAppender", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HidePartsAppender
			}{Backend: memory.New()}
		}},
		{"NoPartsReader", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HidePartsReader
			}{Backend: memory.New()}
		}},
		{"NoDocMaps", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HideDocMaps
			}{Backend: memory.New()}
		}},
		{"NoHeadsLister", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HideHeadsLister
			}{Backend: memory.New()}
		}},
		{"NoDocCounter", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HideDocCounter
			}{Backend: memory.New()}
		}},
		{"NoDocBatcher", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HideDocBatcher
			}{Backend: memory.New()}
		}},
		{"NoKeys", func() backend.Backend {
			return struct {
				*memory.Backend
				satcheltest.HideKeys
			}{Backend: memory.New()}
		}},
	}
	for _, h := range hidden {
		t.Run(h.name, func(t *testing.T) {
			b := h.open()
			for _, c := range []struct {
				name string
				has  bool
			}{
				{"PartsAppender", isA[backend.PartsAppender](b)},
				{"PartsReader", isA[backend.PartsReader](b)},
				{"DocMaps", isA[backend.DocMaps](b)},
				{"HeadsLister", isA[backend.HeadsLister](b)},
				{"DocCounter", isA[backend.DocCounter](b)},
				{"DocBatcher", isA[backend.DocBatcher](b)},
				{"Keys", isA[backend.Keys](b)},
			} {
				if !c.has && "No"+c.name != h.name || c.has && "No"+c.name == h.name {
					t.Fatalf("%s: %s present = %v", h.name, c.name, c.has)
				}
			}
			satcheltest.Run(t, func(t *testing.T) backend.Backend { return h.open() })
		})
	}
}

func isA[I any](b backend.Backend) bool { _, ok := b.(I); return ok }
