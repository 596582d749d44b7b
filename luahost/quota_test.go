package luahost_test

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// TestQuota: a write over its scope's quota raises the Go API's refusal
// in the script, after its file and line, and pcall catches it.
func TestQuota(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind, func(t *testing.T) {
			st := open(t, kind)
			if err := st.SetQuota(context.Background(), "acme", satchel.Quota{Files: 1}); err != nil {
				t.Fatal(err)
			}
			out, _, err := exec(t, st, `store.write("a.md", "x")
local ok, e = pcall(store.write, "b.md", "y"); print(ok, e)
store.write("c.md", "z")`, luahost.Config{Scope: "acme"})
			if want := "false\tscript.lua:2: quota exceeded: scope acme would hold 2 files, over its quota of 1\n"; out != want {
				t.Errorf("printed %q, want %q", out, want)
			}
			const msg = "script.lua:3: quota exceeded: scope acme would hold 2 files, over its quota of 1"
			if err == nil || err.Error() != msg || !errors.Is(err, satchel.ErrQuotaExceeded) {
				t.Errorf("error %v, want %q matching ErrQuotaExceeded", err, msg)
			}
		})
	}
}
