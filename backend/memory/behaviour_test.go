package memory_test

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/satcheltest"
)

func TestBehaviour(t *testing.T) {
	satcheltest.RunBehaviour(t, func(t *testing.T) backend.Backend { return memory.New() })
}
