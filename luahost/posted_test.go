package luahost_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// A run in a child process does not wait for its mutators (decision
// 0109); these cases hold it to what a run that waits does: a failed
// write ends the script at the write's line, and nothing after it reaches
// the store or the output; pcall catches what fails inside it.
func TestPostedMutators(t *testing.T) {
	cases := []struct {
		name, src string
		err       string   // the run's error ("" none)
		kind      error    // its kind, when err is set
		out       string   // what the run printed
		files     []string // the files the thread holds after it
	}{
		{"a failed edit ends the run at its line", `store.write("a.md", "one")
store.str_replace("a.md", "nothing like it", "x")
print("after")
store.write("b.md", "two")
local x = 0
for i = 1, 10 do x = x + i end
store.write("c.md", tostring(x))`,
			"script.lua:2: ", satchel.ErrAnchorNotFound, "", []string{"a.md"}},
		{"the last statement fails", `store.write("a.md", "one")
print("before")
store.write("../escape.md", "x")`,
			"script.lua:3: ", satchel.ErrInvalidPath, "before\n", []string{"a.md"}},
		{"pcall catches a failed write", `local ok, err = pcall(store.write, "../escape.md", "x")
print(ok, (string.gsub(tostring(err), "^.-: ", "")))
store.write("b.md", "after")`,
			"", nil, "false\tinvalid path \"../escape.md\": contains a . or .. segment\n", []string{"b.md"}},
		{"pcall catches inside a function", `local ok = pcall(function()
  store.write("a.md", "x")
  store.str_replace("a.md", "nope", "y")
  store.write("never.md", "z")
end)
print(ok)`,
			"", nil, "false\n", []string{"a.md"}},
		{"a failure before pcall is not pcall's", `store.write("/abs.md", "x")
local ok = pcall(function() end)
print("reached", ok)`,
			"script.lua:1: ", satchel.ErrInvalidPath, "", nil},
		{"a failure in a function raised at a later read", `local function f() store.str_replace("gone.md", "a", "b") end
f()
print(store.exists("x.md"))`,
			"script.lua:1: ", satchel.ErrNotFound, "", nil},
		{"a read sees the writes before it", `for i = 1, 50 do store.append("log.md", i .. "\n") end
print(#store.read("log.md"))`,
			"", nil, "141\n", []string{"log.md"}},
	}
	for _, kind := range backends {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				st := open(t, kind)
				ctx := context.Background()
				s, err := luahost.Compile("script.lua", c.src)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				_, err = s.Run(ctx, luahost.Config{Store: st, Stdout: &out})
				switch {
				case c.err == "" && err != nil:
					t.Fatalf("run failed: %v", err)
				case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
					t.Fatalf("run error %v, want one starting %q", err, c.err)
				case c.kind != nil && !errors.Is(err, c.kind):
					t.Errorf("run error %v is not %v", err, c.kind)
				}
				if out.String() != c.out {
					t.Errorf("printed %q, want %q", out.String(), c.out)
				}
				ws, _ := st.Workspace(ctx, "default", "main")
				files, err := ws.Glob(ctx, "**")
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(files, " ") != strings.Join(c.files, " ") {
					t.Errorf("files %q, want %q", files, c.files)
				}
			})
		}
	}
}
