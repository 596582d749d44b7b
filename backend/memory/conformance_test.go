package memory_test

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/satcheltest"
)

// TestConformance runs the whole suite on the memory backend, and again
// with each of its optional capabilities hidden, so that the paths satchel
// takes without them are proven on it too.
func TestConformance(t *testing.T) {
	satcheltest.Run(t, func(t *testing.T) backend.Backend { return memory.New() })
}
