package luahost_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// TestStaleWrites: a run has a read ledger, shared by its fanout arms; a
// stale change is a Lua error after the script's position.
func TestStaleWrites(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind, func(t *testing.T) {
			st := open(t, kind)
			ctx := context.Background()
			op, _ := st.Workspace(ctx, "default", "main")
			if err := op.Write(ctx, "notes/plan.md", "one\ntwo\n"); err != nil {
				t.Fatal(err)
			}
			_, _, err := exec(t, st, "store.write(\"new.md\", \"x\")\nstore.str_replace(\"notes/plan.md\", \"one\", \"1\")", luahost.Config{})
			if want := "script.lua:2: notes/plan.md exists and you have not read it; read it before changing it"; err == nil || err.Error() != want {
				t.Errorf("unread edit: %v, want %q", err, want)
			}
			if !errors.Is(err, satchel.ErrStale) {
				t.Errorf("error %v does not match ErrStale", err)
			}

			// Another writer changes the file between the run's read and its edit.
			other, _ := st.Workspace(ctx, "default", "main", satchel.WorkspaceActor(satchel.Actor{Agent: "research", Via: "mcp:edit_file"}))
			changed := false
			hook := satchel.Actor{Via: "lua:script.lua"}
			src := `
local s = store.read_numbered("notes/plan.md", 1, 1)
store.write("signal.md", "go")
while not store.exists("changed.md") do end
store.str_replace("notes/plan.md", "two", "2")`
			done := make(chan error, 1)
			go func() {
				_, _, err := exec(t, st, src, luahost.Config{Actor: hook})
				done <- err
			}()
			for !changed {
				if ok, _ := op.Exists(ctx, "signal.md"); ok {
					if _, err := other.StrReplace(ctx, "notes/plan.md", "one", "ONE", false); err != nil {
						t.Fatal(err)
					}
					if err := op.Write(ctx, "changed.md", ""); err != nil {
						t.Fatal(err)
					}
					changed = true
				}
			}
			err = <-done
			h, _ := op.History(ctx, 0, 2)
			c := h[1] // the edit, before changed.md
			want := fmt.Sprintf("script.lua:5: notes/plan.md changed since you last read it: commit %d by agent research (edit_file, %s); read it again before changing it", c.Seq, c.Time.UTC().Format(time.RFC3339))
			if err == nil || err.Error() != want {
				t.Errorf("stale edit: %v, want %q", err, want)
			}

			// Arms share the run's ledger: what one arm read, another may change.
			_, _, err = exec(t, st, `
store.read("notes/plan.md")
fanout(function(t, i)
  if i == 1 then store.str_replace("notes/plan.md", "ONE", "1") end
end, {}, {})
store.str_replace("notes/plan.md", "1", "one again")`, luahost.Config{})
			if err != nil {
				t.Errorf("arms with the run's ledger: %v", err)
			}
		})
	}
}
