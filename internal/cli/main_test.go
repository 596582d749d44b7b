package cli

import (
	"os"
	"testing"

	"github.com/satchel-dev/satchel/luahost"
)

// TestMain: the test binary is also the child process of the scripts'
// runs (luahost.ChildMain).
func TestMain(m *testing.M) {
	luahost.ChildMain()
	os.Exit(m.Run())
}
