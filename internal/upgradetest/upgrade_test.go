package upgradetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/internal/testenv"
)

// baseCommit is the earlier satchel of the rolling upgrade: the newest
// commit whose migration runner knows expand and contract migrations
// and registers its processes, before the schema the current tree
// brings. Move it forward when a release changes the schema. Its
// migrations must be the first ones of the current tree, with the same
// names (a database records them by version and name): if they are
// renumbered, move it to a commit of the current numbering.
const baseCommit = "c2b9df0ed29e0f3f4b02e46607adc772b4182540"

// root is the module's directory.
const root = "../.."

// TestRollingUpgrade builds satchel at baseCommit (from git archive, so a
// clean clone with its history suffices) and the current tree with the
// build tag satchel_upgradetest (two more migrations: an expand one and a
// contract one), and runs both on one PostgreSQL schema: both serve (MCP
// over stdio) and write, each sees the other's commits, an old process started after the new schema runs on
// it, migrate --contract is refused naming the old server while it runs
// and succeeds once it stopped (the new server running through it), and
// the old binary is then refused.
func TestRollingUpgrade(t *testing.T) {
	testenv.Long(t, "builds two satchel binaries")
	url := testenv.PostgresURL(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go command to build satchel with")
	}
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Skip(t, "no git command to read the earlier commit with")
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", baseCommit+"^{commit}").CombinedOutput(); err != nil {
		testenv.Skip(t, "git history is absent: commit %s is not in this checkout (%v: %s); clone with full history", baseCommit[:12], err, strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "base")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, baseCommit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", baseCommit, err, out)
	}
	oldBin, newBin := filepath.Join(tmp, "satchel-old"), filepath.Join(tmp, "satchel-new")
	build := func(dir, out string, tags ...string) {
		args := append([]string{"build", "-trimpath", "-o", out}, tags...)
		cmd := exec.CommandContext(ctx, gobin, append(args, "./cmd/satchel")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build in %s: %v\n%s", dir, err, b)
		}
	}
	build(src, oldBin)
	t.Logf("built satchel at %s", baseCommit[:12])
	build(root, newBin, "-tags", "satchel_upgradetest")
	t.Log("built the current satchel")

	schema := fmt.Sprintf("satchel_upgrade_%d", os.Getpid())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	id := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+id+" CASCADE; CREATE SCHEMA "+id); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), url); err == nil {
			c.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+id+" CASCADE")
			c.Close(context.Background())
		}
	})
	db := url + "&search_path=" + schema
	if !strings.Contains(url, "?") {
		db = url + "?search_path=" + schema
	}

	run := func(bin, stdin string, args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--db", db}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	ok := func(bin, stdin string, args ...string) string {
		t.Helper()
		out, errb, err := run(bin, stdin, args...)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, errb)
		}
		return out
	}

	// The old satchel serves; it creates the schema it knows.
	old := startServe(t, ctx, oldBin, db)
	t.Log("the old satchel serves")
	if r := old.call("write_file", map[string]any{"path": "old.md", "content": "from the old one\n"}); !strings.Contains(r, "wrote") {
		t.Fatalf("old write_file: %s", r)
	}
	// The new one migrates (its expand migration; the contract one waits),
	// reads the old one's commit and writes.
	if got := ok(newBin, "", "fs", "read", "old.md"); got != "from the old one\n" {
		t.Errorf("new reads %q", got)
	}
	srv := startServe(t, ctx, newBin, db)
	if r := srv.call("write_file", map[string]any{"path": "new.md", "content": "from the new one\n"}); !strings.Contains(r, "wrote") {
		t.Fatalf("new write_file: %s", r)
	}
	var m struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal([]byte(ok(newBin, "", "migrate", "--json")), &m); err != nil {
		t.Fatal(err)
	}
	expanded := m.SchemaVersion
	// The old server sees the new one's commit and still writes.
	if r := old.call("read_file", map[string]any{"path": "new.md"}); !strings.Contains(r, "from the new one") {
		t.Errorf("old read_file of new.md: %s", r)
	}
	if r := old.call("write_file", map[string]any{"path": "old2.md", "content": "again\n"}); !strings.Contains(r, "wrote") {
		t.Errorf("old write_file after the new schema: %s", r)
	}
	if r := srv.call("read_file", map[string]any{"path": "old2.md"}); !strings.Contains(r, "again") {
		t.Errorf("new read_file of old2.md: %s", r)
	}
	// An old process that starts during the rollout runs on the new schema.
	if got := ok(oldBin, "", "fs", "read", "new.md"); got != "from the new one\n" {
		t.Errorf("a new old process reads %q", got)
	}

	// The contract migration is refused while the old server runs.
	_, errb, err := run(newBin, "", "migrate", "--contract")
	if err == nil {
		t.Fatal("migrate --contract succeeded while the old satchel runs")
	}
	for _, want := range []string{"refused", fmt.Sprintf("pid %d on ", old.cmd.Process.Pid), "satchel migrate --contract again"} {
		if !strings.Contains(errb, want) {
			t.Errorf("refusal %q lacks %q", errb, want)
		}
	}
	old.stop()
	out := ok(newBin, "", "migrate", "--contract")
	if want := fmt.Sprintf("schema version %d\n", expanded+1); out != want {
		t.Errorf("migrate --contract: %q, want %q", out, want)
	}
	// The old binary is refused on the contracted schema.
	if _, errb, err := run(oldBin, "", "fs", "read", "new.md"); err == nil || !strings.Contains(errb, "upgrade satchel") {
		t.Errorf("the old binary after the contract: %v %q", err, errb)
	}
	if got := ok(newBin, "", "fs", "read", "old.md"); got != "from the old one\n" {
		t.Errorf("new reads %q after the contract", got)
	}
	// The new server ran through the contract.
	if r := srv.call("write_file", map[string]any{"path": "after.md", "content": "after\n"}); !strings.Contains(r, "wrote") {
		t.Errorf("new write_file after the contract: %s", r)
	}
	srv.stop() // before ctx ends, which would kill it
}

// server is a satchel serve over stdio.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	next int
	log  syncBuffer // its standard error, shown when it fails
}

// syncBuffer is a strings.Builder that the command's copying goroutine
// and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startServe(t *testing.T, ctx context.Context, bin, db string) *server {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "--db", db, "serve")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	cmd.Stderr = &s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.out.Buffer(nil, 16<<20)
	t.Cleanup(s.stop)
	s.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "upgrade", "version": "1"}})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func (s *server) send(msg map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("to the server: %v", err)
	}
}

// request sends a request and returns its answer's result (or error).
func (s *server) request(method string, params any) string {
	s.t.Helper()
	s.next++
	s.send(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	for s.out.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
			s.t.Fatalf("from the server: %q: %v", s.out.Text(), err)
		}
		if m.ID != nil && *m.ID == s.next {
			if m.Error != nil {
				return string(m.Error)
			}
			return string(m.Result)
		}
	}
	s.t.Fatalf("the server stopped: %v\n%s", s.out.Err(), s.log.String())
	return ""
}

func (s *server) call(tool string, args map[string]any) string {
	s.t.Helper()
	return s.request("tools/call", map[string]any{"name": tool, "arguments": args})
}

// stop closes the server's input and waits for it to exit (it closes the
// store, deleting its row of processes).
func (s *server) stop() {
	if s.in == nil {
		return
	}
	s.in.Close()
	s.in = nil
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("the server exited: %v\n%s", err, s.log.String())
	}
}
