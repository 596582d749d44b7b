package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// attackScripts are scripts that once took the host down or ignored its
// limits. Each ends with one of its messages (a limit, or the
// interpreter's own refusal where it has one), in bounded time, in a
// process of its own, under its limits: an attack that is to end some
// other way than by its time limit (a memory limit, an error, success)
// has a time limit long enough for that even on a busy machine, where a
// run's process can wait seconds for a core.
var attackScripts = []struct {
	name, src       string
	timeout, memory string
	want            []string // any of these, the whole message or its end ("": succeeded)
}{
	{"gsub", `local s = string.rep("a", 1048576) s = s:gsub("^.*$", ("%0"):rep(2^16)) print(#s)`, "1m", "64MiB",
		[]string{"script exceeded its memory limit (64 MiB)"}},
	{"doubling", `local s = "x" while true do s = s .. s end`, "1m", "256MiB",
		[]string{"script exceeded its memory limit (256 MiB)"}},
	{"tailcall", `local function g(n) return g(n + 1) end g(1)`, "1m", "64MiB",
		[]string{"stack overflow (calls nest at most 200 deep)"}},
	{"shared_fanout", `local t = {} for i = 1, 40 do t = {t, t} end fanout(function(x) return 1 end, t)`, "1m", "64MiB",
		[]string{""}}, // copied once: shared subtables keep their sharing
	{"shared_result", `fanout(function() local t = {} for i = 1, 40 do t = {t, t} end return t end, {})`, "1m", "64MiB",
		[]string{""}}, // copied once: shared subtables keep their sharing
	{"gfind", `for m in string.gfind(("a"):rep(40), ("(.-)"):rep(8) .. "b") do end`, "2s", "64MiB",
		[]string{"script exceeded its time limit (2s)"}},
	{"concat", `table.concat({}, "", 1, 2^53)`, "1m", "64MiB",
		[]string{"invalid value (at index 1) in table for 'concat'"}},
	{"pattern", `local s = string.rep("a", 5000) string.find(s, "(.-)(.-)(.-)(.-)(.-)(.-)(.-)(.-)b")`, "2s", "64MiB",
		[]string{"script exceeded its time limit (2s)"}},
}

// attackGroups are the attacks by limits: one server each.
func attackGroups() map[[2]string][]int {
	g := map[[2]string][]int{}
	for i, c := range attackScripts {
		k := [2]string{c.timeout, c.memory}
		g[k] = append(g[k], i)
	}
	return g
}

// ends says whether msg is one of want ("" is a run that succeeded).
func ends(msg string, want []string) bool {
	for _, w := range want {
		if (w == "" && msg == "") || (w != "" && strings.HasSuffix(msg, w)) {
			return true
		}
	}
	return false
}

// TestAttackScriptsRun: each attack through satchel run ends with its
// message, and the next run works.
func TestAttackScriptsRun(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	ok := writeScript(t, dir, "ok.lua", `store.write("a.md", "fine") print(store.read("a.md"))`)
	for _, c := range attackScripts {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, dir, c.name+".lua", c.src)
			args := []string{"run", path, "--max-memory", c.memory, "--timeout", c.timeout}
			start := time.Now()
			r := h.run(args...)
			msg := strings.TrimSuffix(r.Err, "\n")
			if !ends(msg, c.want) {
				t.Errorf("satchel run %s: exit %d, %q; want one of %q", c.name, r.Code, msg, c.want)
			}
			if took := time.Since(start); took > time.Minute {
				t.Errorf("took %s", took)
			}
			if out := h.ok("run", ok); out != "fine\n" {
				t.Errorf("the run after: %q", out)
			}
		})
	}
}

// TestAttackScriptsServed: each attack through run_script, all at once,
// against a serving process whose other calls keep being answered while
// they run; then the bounds on runs, and the server still answers.
func TestAttackScriptsServed(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	for _, c := range attackScripts {
		writeScript(t, dir, c.name+".lua", c.src)
	}
	writeScript(t, dir, "spin.lua", `while true do end`)
	var cs *mcp.ClientSession
	call := func(name string, args map[string]any) (string, bool, map[string]any) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sc map[string]any
		if r.StructuredContent != nil {
			b, _ := json.Marshal(r.StructuredContent)
			_ = json.Unmarshal(b, &sc)
		}
		return r.Content[0].(*mcp.TextContent).Text, r.IsError, sc
	}
	for limits, group := range attackGroups() {
		stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--scope", "acme", "--scripts", dir,
			"--script-timeout", limits[0], "--script-max-memory", limits[1], "--max-runs-per-token", "32")
		var err error
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
			&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr)
		}
		ids := map[int]string{}
		for _, i := range group {
			text, isErr, sc := call("run_script", map[string]any{"script": attackScripts[i].name + ".lua", "wait_s": 0})
			if isErr {
				t.Fatalf("run_script %s: %s", attackScripts[i].name, text)
			}
			ids[i], _ = sc["run_id"].(string)
		}
		// While they run, other calls are answered.
		for n := 0; len(ids) > 0; n++ {
			p := fmt.Sprintf("notes/%d.md", n)
			if _, isErr, _ := call("write_file", map[string]any{"path": p, "content": "still here"}); isErr {
				t.Fatalf("write_file while the scripts run")
			}
			if text, isErr, _ := call("read_file", map[string]any{"path": p}); isErr || !strings.Contains(text, "still here") {
				t.Fatalf("read_file while the scripts run: %q", text)
			}
			for i, id := range ids {
				text, isErr, sc := call("check_run", map[string]any{"run_id": id})
				if sc != nil && sc["state"] == "running" {
					continue
				}
				delete(ids, i)
				if !isErr {
					text = ""
				}
				if c := attackScripts[i]; !ends(text, c.want) {
					t.Errorf("run_script %s: %q; want one of %q", c.name, text, c.want)
				}
			}
		}
		// wait_s is bounded.
		if text, isErr, _ := call("run_script", map[string]any{"script": "spin.lua", "wait_s": 301}); !isErr || text != "wait_s must be at most 300, was 301" {
			t.Errorf("wait_s 301: %q", text)
		}
		_ = cs.Close()
		if code := wait(); code != 0 {
			t.Errorf("serve exited %d: %s", code, stderr)
		}
	}

	// 200 runs of one token: the fifth is refused, naming the bound. The
	// four run until the session ends, however long the 200 calls take
	// (with a short time limit, one ending while they were made let the
	// next run in).
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--scope", "acme", "--scripts", dir, "--script-timeout", "10m")
	var err error
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	for i := 0; i < 200; i++ {
		text, isErr, _ := call("run_script", map[string]any{"script": "spin.lua", "wait_s": 0})
		if i < 4 {
			if isErr {
				t.Fatalf("run %d: %s", i, text)
			}
			continue
		}
		if !isErr || text != "too many script runs for this token: at most 4 at once (--max-runs-per-token); wait for one of its runs to end" {
			t.Fatalf("run %d: %q", i, text)
		}
	}
	if text, _, sc := call("check_run", map[string]any{}); len(sc["runs"].([]any)) != 4 || !strings.Contains(text, "spin.lua running") {
		t.Errorf("check_run without run_id: %q", text)
	}
	if _, isErr, _ := call("write_file", map[string]any{"path": "after.md", "content": "ok"}); isErr {
		t.Errorf("write_file after the runs")
	}
	_ = cs.Close() // the session's runs end with it
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}

// TestAttackScriptsHTTP: over HTTP, one token's attack runs go on while
// another token's calls keep being answered; a run ends with its session
// unless detached, and a new session of the token finds both.
func TestAttackScriptsHTTP(t *testing.T) {
	h := newHarness(t)
	attacker, _, err := h.store.CreateToken(context.Background(), satchel.TokenSpec{Agent: "attacker", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	bystander, _, err := h.store.CreateToken(context.Background(), satchel.TokenSpec{Agent: "bystander", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range attackScripts {
		writeScript(t, dir, c.name+".lua", c.src)
	}
	writeScript(t, dir, "wait.lua", `while not store.exists("go.md") do end print("went")`)
	ctx := context.Background()
	var addr string
	// serve starts satchel serve --http with the runs' limits; the
	// function it returns stops it.
	serve := func(timeout, memory string) func() {
		sctx, cancel := context.WithCancel(ctx)
		_, _, stderr, wait := h.serving(sctx, "serve", "--http", "127.0.0.1:0", "--scripts", dir,
			"--script-max-memory", memory, "--script-timeout", timeout, "--max-runs-per-token", "32")
		addr = ""
		re := regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`)
		for deadline := time.Now().Add(time.Minute); addr == ""; {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				addr = m[1]
			} else if time.Now().After(deadline) {
				t.Fatalf("the server never listened: %s", stderr)
			} else {
				time.Sleep(5 * time.Millisecond)
			}
		}
		return func() {
			cancel()
			if code := wait(); code != 0 {
				t.Errorf("serve exited %d: %s", code, stderr)
			}
		}
	}
	connect := func(secret string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport(secret)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) (string, bool, map[string]any) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sc map[string]any
		if r.StructuredContent != nil {
			b, _ := json.Marshal(r.StructuredContent)
			_ = json.Unmarshal(b, &sc)
		}
		return r.Content[0].(*mcp.TextContent).Text, r.IsError, sc
	}
	for limits, group := range attackGroups() {
		stop := serve(limits[0], limits[1])
		att, by := connect(attacker), connect(bystander)
		ids := map[int]string{}
		for _, i := range group {
			_, isErr, sc := call(att, "run_script", map[string]any{"script": attackScripts[i].name + ".lua", "wait_s": 0, "detach": true})
			if isErr {
				t.Fatalf("run_script %s", attackScripts[i].name)
			}
			ids[i], _ = sc["run_id"].(string)
		}
		for n := 0; len(ids) > 0; n++ {
			p := fmt.Sprintf("by/%d.md", n)
			if _, isErr, _ := call(by, "write_file", map[string]any{"path": p, "content": "answered"}); isErr {
				t.Fatal("the bystander's write_file")
			}
			if text, isErr, _ := call(by, "read_file", map[string]any{"path": p}); isErr || !strings.Contains(text, "answered") {
				t.Fatalf("the bystander's read_file: %q", text)
			}
			for i, id := range ids {
				text, isErr, sc := call(att, "check_run", map[string]any{"run_id": id})
				if sc != nil && sc["state"] == "running" {
					continue
				}
				delete(ids, i)
				if !isErr {
					text = ""
				}
				if c := attackScripts[i]; !ends(text, c.want) {
					t.Errorf("run_script %s: %q; want one of %q", c.name, text, c.want)
				}
			}
		}
		_ = att.Close()
		_ = by.Close()
		stop()
	}
	// The detached run waits for go.md, written after the bound run has
	// ended: its time limit is far from that on a busy machine.
	stop := serve("10m", "64MiB")
	att := connect(attacker)
	// The session's run ends with it; the detached one goes on.
	_, _, bound := call(att, "run_script", map[string]any{"script": "wait.lua", "wait_s": 0})
	_, _, detached := call(att, "run_script", map[string]any{"script": "wait.lua", "wait_s": 0, "detach": true})
	_ = att.Close()
	att = connect(attacker)
	for {
		text, isErr, sc := call(att, "check_run", map[string]any{"run_id": bound["run_id"]})
		if sc != nil && sc["state"] == "running" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !isErr || text != "script wait.lua was stopped: its session ended" {
			t.Errorf("the session's run after it ended: %q", text)
		}
		break
	}
	if text, _, _ := call(att, "check_run", map[string]any{}); !strings.Contains(text, detached["run_id"].(string)+" wait.lua running (detached)") {
		t.Errorf("check_run's list: %q", text)
	}
	call(att, "write_file", map[string]any{"path": "go.md", "content": "go"})
	for {
		text, _, sc := call(att, "check_run", map[string]any{"run_id": detached["run_id"]})
		if sc != nil && sc["state"] == "running" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if text != "went\n" {
			t.Errorf("the detached run: %q", text)
		}
		break
	}
	_ = att.Close()
	stop()
}
