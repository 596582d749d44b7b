//go:build linux

package luahost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// children returns the pids of this process's child processes.
func children(t *testing.T) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/stat"))
			pids = append(pids, pid)
		}
	}
	return pids
}

// killOnPrint terminates this process's children at the first print:
// the run's child dies in the middle of its writes.
type killOnPrint struct {
	t    *testing.T
	once sync.Once
}

func (k *killOnPrint) Write(p []byte) (int, error) {
	k.once.Do(func() {
		for _, pid := range children(k.t) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	})
	return len(p), nil
}

// TestChildKilledMidWrite: a run whose child process dies while it writes
// ends with `script crashed: ...`; a plain run keeps exactly the commits
// it made before, each whole; an atomic run publishes nothing and leaves
// no fork.
func TestChildKilledMidWrite(t *testing.T) {
	const src = `local i = 0
while true do
  i = i + 1
  store.write("f" .. i .. ".md", string.rep("x", 7000) .. i)
  if i == 20 then print("twenty") end
end`
	s, err := luahost.Compile("writer.lua", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range backends {
		for _, atomic := range []bool{false, true} {
			t.Run(kind+"/atomic="+strconv.FormatBool(atomic), func(t *testing.T) {
				st := open(t, kind)
				ctx := context.Background()
				ws, err := st.Workspace(ctx, "default", "main")
				if err != nil {
					t.Fatal(err)
				}
				if err := ws.Write(ctx, "before.md", "kept"); err != nil {
					t.Fatal(err)
				}
				before, _ := ws.Head(ctx)
				_, err = s.Run(ctx, luahost.Config{Store: st, Atomic: atomic, Stdout: &killOnPrint{t: t}})
				if err == nil || !errors.Is(err, luahost.ErrCrashed) || !strings.HasPrefix(err.Error(), "script crashed: ") {
					t.Fatalf("error %v, want script crashed", err)
				}
				head, _ := ws.Head(ctx)
				files, _ := ws.Glob(ctx, "f*.md")
				if atomic {
					if head.Seq != before.Seq || len(files) != 0 {
						t.Fatalf("an atomic run that died published: head %d (was %d), files %v", head.Seq, before.Seq, files)
					}
					threads, _ := st.Threads(ctx, "default")
					for _, th := range threads {
						if strings.Contains(th.Name, "-run-") {
							t.Errorf("fork %s left", th.Name)
						}
					}
					return
				}
				n := int(head.Seq - before.Seq)
				if n < 20 || len(files) != n {
					t.Fatalf("%d commits and %d files after the death (at least 20 written before it)", n, len(files))
				}
				for i := 1; i <= n; i++ {
					got, err := ws.Read(ctx, "f"+strconv.Itoa(i)+".md")
					if want := strings.Repeat("x", 7000) + strconv.Itoa(i); err != nil || got != want {
						t.Fatalf("f%d.md: %d bytes, %v: not whole", i, len(got), err)
					}
				}
			})
		}
	}
}

// TestRunSessionEnd: a served run stops when the context of Until ends
// (its session), with the reason; a detached one goes on; the bounds
// refuse runs past them, naming them.
func TestRunSessionEnd(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wait.lua"), []byte(`while not store.exists("go.md") do end print("done")`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := open(t, "memory")
	sc, err := luahost.OpenScripts(dir, luahost.Config{Store: st, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	sc.SetLimits(luahost.ScriptsLimits{MaxRuns: 3, MaxRunsPerToken: 2})
	ctx := context.Background()
	session, end := context.WithCancel(ctx)
	alice := luahost.Caller{Scope: "default", Thread: "main", Actor: satchel.Actor{Credential: "alice"}}
	bob := luahost.Caller{Scope: "default", Thread: "main", Actor: satchel.Actor{Credential: "bob"}}
	bound, err := sc.Start(ctx, alice, luahost.StartRequest{Script: "wait", Until: session})
	if err != nil || bound.State != "running" {
		t.Fatalf("start: %+v %v", bound, err)
	}
	detached, err := sc.Start(ctx, alice, luahost.StartRequest{Script: "wait", Detach: true})
	if err != nil || detached.State != "running" {
		t.Fatalf("start detached: %+v %v", detached, err)
	}
	if _, err := sc.Start(ctx, alice, luahost.StartRequest{Script: "wait"}); err == nil || !errors.Is(err, satchel.ErrLimitExceeded) ||
		!strings.Contains(err.Error(), "at most 2 at once (--max-runs-per-token)") {
		t.Errorf("third run of a token: %v", err)
	}
	if _, err := sc.Start(ctx, bob, luahost.StartRequest{Script: "wait", Detach: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Start(ctx, bob, luahost.StartRequest{Script: "wait"}); err == nil ||
		!strings.Contains(err.Error(), "the server runs at most 3 at once (--max-runs)") {
		t.Errorf("fourth run: %v", err)
	}
	if runs := sc.Runs(alice); len(runs) != 2 {
		t.Errorf("alice's runs: %+v", runs)
	}
	end()
	for {
		rs, err := sc.State(alice, bound.ID)
		if rs.State == "running" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if rs.State != "failed" || err == nil || rs.Error != "script wait.lua was stopped: its session ended" {
			t.Fatalf("the session's run: %+v %v", rs, err)
		}
		break
	}
	if rs, _ := sc.State(alice, detached.ID); rs.State != "running" {
		t.Fatalf("the detached run: %+v", rs)
	}
	ws, _ := st.Workspace(ctx, "default", "main")
	if err := ws.Write(ctx, "go.md", "go"); err != nil {
		t.Fatal(err)
	}
	for {
		rs, err := sc.State(alice, detached.ID)
		if rs.State == "running" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if rs.State != "succeeded" || rs.Printed != "done\n" {
			t.Fatalf("the detached run: %+v %v", rs, err)
		}
		break
	}
}

// inspectOnPrint runs inspect on this process's children at the first
// print, then cancels the run.
type inspectOnPrint struct {
	t       *testing.T
	once    sync.Once
	inspect func(pid int)
	cancel  context.CancelFunc
}

func (w *inspectOnPrint) Write(p []byte) (int, error) {
	w.once.Do(func() {
		for _, pid := range children(w.t) {
			w.inspect(pid)
		}
		w.cancel()
	})
	return len(p), nil
}

// TestChildHoldsNothing: a run's child process has an empty environment
// but for its mode, and no file of the store or socket open: no
// credentials and no database handle to reach if a script escaped the
// interpreter.
func TestChildHoldsNothing(t *testing.T) {
	t.Setenv("SATCHEL_DB", "postgres://user:secret@db.example/prod")
	st := open(t, "sqlite")
	s, err := luahost.Compile("spin.lua", `store.write("a.md", "x") print("running") while true do end`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	w := &inspectOnPrint{t: t, cancel: cancel, inspect: func(pid int) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			return // not a child of this run (gone meanwhile)
		}
		seen++
		if string(env) != "SATCHEL_LUA_CHILD=1\x00" {
			t.Errorf("the child's environment: %q", env)
		}
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			target, _ := os.Readlink(fd)
			if strings.Contains(target, "lua.db") || strings.HasPrefix(target, "socket:") {
				t.Errorf("the child holds %s", target)
			}
		}
	}}
	_, err = s.Run(ctx, luahost.Config{Store: st, Stdout: w})
	if err == nil || !strings.Contains(err.Error(), "script spin.lua was stopped: context canceled") {
		t.Fatalf("error %v, want stopped", err)
	}
	if seen == 0 {
		t.Fatal("no child seen")
	}
}
