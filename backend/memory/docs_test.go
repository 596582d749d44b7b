package memory_test

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/satcheltest"
)

func TestDocuments(t *testing.T) {
	satcheltest.RunDocuments(t, func(t *testing.T) backend.Backend { return memory.New() })
}
