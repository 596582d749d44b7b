package satcheltest

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

func has[T any](b backend.Backend) bool {
	_, ok := backend.As[T](b)
	return ok
}

// TestHide: a hidden capability is found neither on the wrapper nor below
// it; every other one is found below it, through nested wrappers too.
func TestHide(t *testing.T) {
	m := memory.New()
	if !has[backend.HeadsLister](m) || !has[backend.Keys](m) || !has[backend.Documents](m) {
		t.Fatal("the memory backend lacks a capability the test relies on")
	}
	one := Hide[backend.HeadsLister](m)
	if has[backend.HeadsLister](one) {
		t.Error("Hide[HeadsLister]: HeadsLister is found")
	}
	two := Hide[backend.Keys](one)
	if has[backend.HeadsLister](two) || has[backend.Keys](two) {
		t.Error("nested hiders: a hidden capability is found")
	}
	if !has[backend.Documents](two) || !has[backend.DocBatcher](two) || !has[*memory.Backend](two) {
		t.Error("nested hiders: a capability not hidden is not found")
	}
	// A wrapper without Unwrap hides everything it does not declare.
	if has[backend.Documents](struct{ backend.Backend }{m}) {
		t.Error("a wrapper without Unwrap: Documents is found")
	}
}

// TestCapabilitiesHidden: each capability Run hides is one the memory,
// SQLite or PostgreSQL backend may offer, and hiding it hides it alone.
func TestCapabilitiesHidden(t *testing.T) {
	m := memory.New()
	for _, c := range capabilities {
		if !c.has(m) {
			continue
		}
		h := c.hide(m)
		if c.has(h) {
			t.Errorf("%s: not hidden", c.name)
		}
		for _, o := range capabilities {
			if o.name != c.name && o.has(m) && !o.has(h) {
				t.Errorf("hiding %s hides %s too", c.name, o.name)
			}
		}
	}
}
