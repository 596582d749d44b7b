package inspector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// The planted incident: an agent of one fork disables the auth check,
// then goes on appending to its log, among many threads that do the same.
const (
	incidentThread = "worker-07"
	authBefore     = "\treturn verify(token)\n"
	authAfter      = "\treturn true // auth off while debugging\n"
)

// incidentStore fills st's scope acme with a main thread and threads-1
// forks of it, about commits commits in all: agents in bursts append to
// logs/agent.log and now and then write a note; near the end
// worker-07 edits src/auth.go, then appends 25 times.
func incidentStore(t testing.TB, st *satchel.Store, threads, commits int) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	as := func(agent, via string, name string) *satchel.Workspace {
		ws, err := st.Workspace(ctx, "acme", name, satchel.WorkspaceActor(satchel.Actor{Agent: agent, Via: via, Client: "claude-code"}))
		must(err)
		return ws
	}
	main := as("lead", "mcp:write_file", "main")
	must(main.Write(ctx, "src/auth.go", "package auth\n\nfunc Check(token string) bool {\n"+authBefore+"}\n"))
	must(main.Write(ctx, "README.md", "# Service\n"))
	names := []string{"main"}
	for i := 1; i < threads; i++ {
		name := fmt.Sprintf("worker-%02d", i)
		_, err := main.Fork(ctx, "head", name)
		must(err)
		names = append(names, name)
	}
	done, planted := 3+threads, false
	for turn := 0; done < commits || !planted; turn++ {
		name := names[turn%len(names)]
		agent := name
		burst := 5 + (turn*7)%20
		if !planted && done >= commits-100 && name == incidentThread {
			ed := as(agent, "mcp:str_replace", name)
			_, err := ed.StrReplace(ctx, "src/auth.go", authBefore, authAfter, false)
			must(err)
			done++
			planted, burst = true, 25
		}
		ap := as(agent, "mcp:append_file", name)
		for j := 0; j < burst && (done < commits || planted && j < 25); j++ {
			must(ap.Append(ctx, "logs/agent.log", fmt.Sprintf("%s step %d.%d\n", agent, turn, j)))
			done++
		}
		if turn%3 == 0 {
			must(as(agent, "mcp:write_file", name).Write(ctx, fmt.Sprintf("notes/n%d.md", turn), fmt.Sprintf("# Note %d\n", turn)))
			done++
		}
	}
	if !planted {
		t.Fatalf("the incident was not planted in %d commits", commits)
	}
}

// newIncidentFixture is an inspector over a store filled by incidentStore.
func newIncidentFixture(t testing.TB, threads, commits int) *fixture {
	t.Helper()
	ctx := context.Background()
	db := t.TempDir() + "/incident.db"
	st, err := satchel.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	incidentStore(t, st, threads, commits)
	in, err := New(Config{Store: st, PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, in: in, db: db}
	f.srv = httptest.NewServer(in.Handler())
	t.Cleanup(f.srv.Close)
	return f
}
