package luahost_test

import (
	"os"
	"testing"

	"github.com/satchel-dev/satchel/luahost"
)

// TestMain: the test binary is also the runs' child process.
func TestMain(m *testing.M) {
	luahost.ChildMain()
	os.Exit(m.Run())
}
