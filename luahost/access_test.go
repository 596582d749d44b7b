package luahost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
	"github.com/satchel-dev/satchel/satcheltest"
)

// luaCall is the Lua of a case of the file rules table ("" when Lua's
// store has no such operation).
func luaCall(c satcheltest.AccessCase) string {
	q := strconv.Quote(c.Path)
	seen := "pcall(store.read, " + q + "); " // a run changes only files it has read
	switch c.Op {
	case "read":
		return "print(store.read(" + q + "))"
	case "write":
		return seen + "store.write(" + q + `, "new\n")`
	case "append":
		return seen + "store.append(" + q + `, "more\n")`
	case "edit":
		return seen + "store.str_replace(" + q + `, "e", "E", true)`
	case "delete":
		return seen + "store.delete(" + q + ")"
	case "glob":
		return "for _, p in ipairs(store.glob(" + q + ")) do print(p) end"
	}
	return ""
}

// projectWith writes a project whose agent research has rules (flag
// form) as its agent.json "files".
func projectWith(t *testing.T, rules string) *satchel.Project {
	t.Helper()
	dir := t.TempDir()
	agent := `{"name": "research"}`
	if rules != "" {
		r, err := satchel.ParseFileRules(rules)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := r.MarshalJSON()
		agent = `{"name": "research", "files": ` + string(js) + `}`
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents", "research"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "research", "agent.json"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := satchel.LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAccessTable runs the file rules table through Lua's store, as
// `satchel run --agent research` does: the agent's rules from its
// agent.json, the token's and read-only as the run's Options.
func TestAccessTable(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			st := open(t, kind)
			projects := map[string]*satchel.Project{}
			for i, c := range satcheltest.AccessCases() {
				src := luaCall(c)
				if src == "" {
					continue
				}
				p, ok := projects[c.Agent]
				if !ok {
					p = projectWith(t, c.Agent)
					projects[c.Agent] = p
				}
				thread := fmt.Sprintf("lua-%d", i)
				ws, err := st.Workspace(context.Background(), "default", thread)
				if err != nil {
					t.Fatal(err)
				}
				if err := satcheltest.SetUpAccess(context.Background(), ws); err != nil {
					t.Fatal(err)
				}
				var opts []satchel.WorkspaceOption
				if c.Token != "" {
					r, _ := satchel.ParseFileRules(c.Token)
					opts = append(opts, satchel.WithFileRules(r))
				}
				if c.ReadOnly {
					opts = append(opts, satchel.ReadOnlyFiles())
				}
				out, _, err := exec(t, st, src, luahost.Config{Thread: thread, Project: p, Agent: satcheltest.AccessAgent,
					Actor: satchel.Actor{Agent: satcheltest.AccessAgent}, Options: opts})
				errText := ""
				if err != nil {
					errText = strings.TrimPrefix(err.Error(), "script.lua:1: ")
				}
				satcheltest.CheckAccessCase(t, c, out, errText, true)
			}
		})
	}
}

// TestReadOnlyDocs: a read-only run (serve --read-only, a --read-only
// token) reads documents and refuses docs.set and docs.remove.
func TestReadOnlyDocs(t *testing.T) {
	st := open(t, "memory")
	p := project(t)
	if _, _, err := exec(t, st, `docs.set("notes", {id = "a", rank = 1, tags = {}})`, luahost.Config{Project: p}); err != nil {
		t.Fatal(err)
	}
	out, _, err := exec(t, st, `print(docs.get("notes", "a").rank)`, luahost.Config{Project: p, ReadOnlyDocs: true})
	if err != nil || out != "1\n" {
		t.Errorf("docs.get read-only: %q, %v", out, err)
	}
	for _, src := range []string{`docs.set("notes", {id = "b", rank = 1, tags = {}})`, `docs.remove("notes", "a")`} {
		_, _, err := exec(t, st, src, luahost.Config{Project: p, ReadOnlyDocs: true})
		if err == nil || err.Error() != "script.lua:1: documents cannot be changed here: this caller may only read (--read-only)" {
			t.Errorf("%s read-only: %v", src, err)
		}
	}
}
