package satchel_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// The lifecycle tests with a writer in another process re-execute the
// test binary; these variables tell the child what to do.
const (
	childDSNEnv    = "SATCHEL_LIFECYCLE_CHILD_DSN"
	childScopeEnv  = "SATCHEL_LIFECYCLE_CHILD_SCOPE"
	childThreadEnv = "SATCHEL_LIFECYCLE_CHILD_THREAD"
)

func TestMain(m *testing.M) {
	if dsn := os.Getenv(childDSNEnv); dsn != "" {
		if err := lifecycleWriter(dsn, os.Getenv(childScopeEnv), os.Getenv(childThreadEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lifecycleWriter writes w/1, w/2, ... to a workspace, one commit each,
// and prints "ok N SEQ" for each write that committed (SEQ: its commit's
// sequence number) and "archived N" for
// each refused as archived. It stops when its standard input closes, or
// after the fifth refusal; any other error ends it with that error.
func lifecycleWriter(dsn, scope, thread string) error {
	ctx := context.Background()
	st, err := satchel.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, scope, thread)
	if err != nil {
		return err
	}
	var stop sync.Once
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop.Do(func() { close(done) })
	}()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	refused := 0
	for i := 1; ; i++ {
		select {
		case <-done:
			return nil
		default:
		}
		var c satchel.Commit
		err := ws.Write(ctx, fmt.Sprintf("w/%06d", i), strconv.Itoa(i), satchel.Committed(&c))
		switch {
		case err == nil:
			fmt.Fprintf(out, "ok %d %d\n", i, c.Seq)
		case errors.Is(err, satchel.ErrArchived):
			fmt.Fprintf(out, "archived %d\n", i)
			if refused++; refused == 5 {
				return nil
			}
		default:
			return fmt.Errorf("write %d: %w", i, err)
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
}

// child is a lifecycleWriter running in another process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // its output, line by line; closed at its end
	err   *strings.Builder
}

func startWriter(t *testing.T, dsn, scope, thread string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDSNEnv+"="+dsn, childScopeEnv+"="+scope, childThreadEnv+"="+thread)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 1<<16), err: &strings.Builder{}}
	cmd.Stderr = c.err
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	return c
}

// waitOK reads the child's lines until it has reported n more commits;
// it returns every line read.
func (c *child) waitOK(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	for n > 0 {
		l, ok := <-c.lines
		if !ok {
			t.Fatalf("the writer ended before %d more commits: %s", n, c.err)
		}
		got = append(got, l)
		if strings.HasPrefix(l, "ok ") {
			n--
		}
	}
	return got
}

// finish closes the child's input, waits for it and returns the rest of
// its lines.
func (c *child) finish(t *testing.T) []string {
	t.Helper()
	_ = c.stdin.Close()
	var got []string
	for l := range c.lines {
		got = append(got, l)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("the writer failed: %v: %s", err, c.err)
	}
	return got
}

// processBackends opens a store that another process can open too, by
// its DSN: a SQLite file, and a PostgreSQL schema when
// SATCHEL_TEST_POSTGRES is set.
func processBackends() map[string]func(t *testing.T) (*satchel.Store, string) {
	return map[string]func(t *testing.T) (*satchel.Store, string){
		"sqlite": func(t *testing.T) (*satchel.Store, string) {
			dsn := sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "s.db"))
			s, err := satchel.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, dsn
		},
		"postgres": func(t *testing.T) (*satchel.Store, string) {
			url := testenv.PostgresURL(t)
			b, u := postgrestest.OpenAt(t, url, postgrestest.Name("satchel_life"))
			return satchel.New(b), u
		},
	}
}

// TestPurgeRacingWriter purges a scope while another process writes to
// it: each write lands either before the purge (and is gone) or after it,
// in a fresh scope; nothing of the old scope is left, and the store is
// sound.
func TestPurgeRacingWriter(t *testing.T) {
	for name, open := range processBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st, dsn := open(t)
			ws, err := st.Workspace(ctx, "p", "main")
			must(t, err)
			must(t, ws.Write(ctx, "seed.md", "seed"))
			other, err := st.Workspace(ctx, "q", "main")
			must(t, err)
			must(t, other.Write(ctx, "kept.md", "kept"))
			if _, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "p"}); err != nil {
				t.Fatal(err)
			}
			c := startWriter(t, dsn, "p", "main")
			lines := c.waitOK(t, 20)
			rep, err := st.Purge(ctx, "p")
			must(t, err)
			if rep.Threads != 1 || rep.Tokens != 1 || rep.Commits < 21 {
				t.Errorf("Purge = %+v", rep)
			}
			// The writer's head goes back to 1 with its first write after
			// the purge: wait for ten of those.
			type ok struct{ n, seq int }
			var oks []ok
			parse := func(ls []string) {
				for _, l := range ls {
					var o ok
					if _, err := fmt.Sscanf(l, "ok %d %d", &o.n, &o.seq); err != nil {
						t.Fatalf("the writer said %q", l)
					}
					oks = append(oks, o)
				}
			}
			parse(lines)
			reset := -1 // the first write after the purge
			for reset < 0 || len(oks)-reset < 10 {
				parse(c.waitOK(t, 1))
				if o := oks[len(oks)-1]; reset < 0 && o.seq <= oks[len(oks)-2].seq {
					reset = len(oks) - 1
				}
			}
			parse(c.finish(t))

			files, err := ws.Glob(ctx, "**")
			must(t, err)
			present := map[string]bool{}
			for _, f := range files {
				present[f] = true
			}
			if present["seed.md"] {
				t.Errorf("a file of the purged scope survived")
			}
			// The writes before the purge are gone, every one of those
			// after it is there, from commit 1 of the fresh scope.
			for i, o := range oks {
				if p := present[fmt.Sprintf("w/%06d", o.n)]; p != (i >= reset) {
					t.Errorf("write %d (the writer's %d of %d; the first after the purge is %d): present %v", o.n, i, len(oks), reset, p)
				}
			}
			if oks[reset].seq != 1 || len(files) != len(oks)-reset {
				t.Errorf("the first write after the purge is commit %d; %d files for %d writes after the purge", oks[reset].seq, len(files), len(oks)-reset)
			}
			h, err := ws.History(ctx, 0, 0)
			must(t, err)
			if len(h) != len(oks)-reset {
				t.Errorf("the fresh scope's log has %d commits, want %d", len(h), len(oks)-reset)
			}
			got, err := other.Read(ctx, "kept.md")
			if err != nil || got != "kept" {
				t.Errorf("another scope's file: %q, %v", got, err)
			}
			if toks, _ := st.Tokens(ctx); len(toks) != 0 {
				t.Errorf("tokens after purge: %+v", toks)
			}
			if _, err := st.GC(ctx, "", satchel.NoGrace); err != nil {
				t.Fatal(err)
			}
			chk, err := st.Check(ctx)
			must(t, err)
			if len(chk.Faults) != 0 {
				t.Errorf("check after a racing purge: %+v", chk.Faults)
			}
		})
	}
}

// TestArchiveRacingWriter archives a thread while another process writes
// to it: the writes that committed all come before the archive entry, and
// every write after it is refused.
func TestArchiveRacingWriter(t *testing.T) {
	for name, open := range processBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st, dsn := open(t)
			ws, err := st.Workspace(ctx, "a", "main")
			must(t, err)
			must(t, ws.Write(ctx, "seed.md", "seed"))
			c := startWriter(t, dsn, "a", "main")
			lines := c.waitOK(t, 20)
			res, err := st.ArchiveThread(ctx, "a", "main")
			must(t, err)
			// The writer stops by itself after five refusals.
			for l := range c.lines {
				lines = append(lines, l)
			}
			if err := c.cmd.Wait(); err != nil {
				t.Fatalf("the writer failed: %v: %s", err, c.err)
			}
			oks, refusals := 0, 0
			for _, l := range lines {
				switch {
				case strings.HasPrefix(l, "ok "):
					if refusals > 0 {
						t.Fatalf("%q after a refusal", l)
					}
					oks++
				case strings.HasPrefix(l, "archived "):
					refusals++
				default:
					t.Fatalf("the writer said %q", l)
				}
			}
			if refusals != 5 {
				t.Errorf("%d refusals", refusals)
			}
			// seed, every write that committed, then the archive entry.
			if res.Head != int64(oks)+2 {
				t.Errorf("the archive entry is commit %d, after %d writes", res.Head, oks)
			}
			h, err := ws.History(ctx, 0, 1)
			must(t, err)
			if h[0].Op != "archive" || h[0].Seq != res.Head {
				t.Errorf("head %+v, want the archive entry %d", h[0], res.Head)
			}
			files, err := ws.Glob(ctx, "w/*")
			must(t, err)
			if len(files) != oks {
				t.Errorf("%d files after %d writes", len(files), oks)
			}
		})
	}
}
