package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// childHeadsEnv makes the test binary a writer that TestHeadSeesOtherProcess
// drives through its standard input (headsChild).
const childHeadsEnv = "SATCHEL_SQLITE_CHILD_HEADS"

// headsChild opens the database at path and, for each line of in, appends
// to thread "h" of scope "x": "append" one commit, "restart" one commit
// and then a checkpoint that starts the WAL over, "run N" N commits. It
// writes "seq id" once each commit is stored.
func headsChild(ctx context.Context, path string, in io.Reader, out io.Writer) error {
	b, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer b.Close()
	th, err := b.Thread(ctx, "x", "h", true)
	if err != nil {
		return err
	}
	appendOne := func() error {
		for {
			h, _, err := b.Head(ctx, th.ID)
			if err != nil {
				return err
			}
			res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: h.Seq + 1, Root: []byte("child"), Meta: []byte("{}")}})
			if err == nil {
				err = res[0].Err
			}
			if errors.Is(err, backend.ErrStale) {
				continue // another writer took the seq: read the head again
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "%d %d\n", res[0].Commit.Seq, res[0].Commit.ID)
			return err
		}
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "append":
			err = appendOne()
		case "restart":
			if err = appendOne(); err == nil {
				_, err = b.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			}
		case "run":
			var n int
			fmt.Sscan(arg, &n)
			for i := 0; i < n && err == nil; i++ {
				err = appendOne()
			}
		default:
			err = fmt.Errorf("unknown command %q", sc.Text())
		}
		if err != nil {
			return err
		}
	}
	return sc.Err()
}

// startHeadsChild starts a writer process on path; send writes it a
// command, acks yields what it stored.
func startHeadsChild(t *testing.T, path string) (send func(string), acks *bufio.Scanner) {
	t.Helper()
	// Not t.Context(): it is done before the cleanup lets the process end.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childHeadsEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process: %v: %s", err, stderr.String())
		}
	})
	send = func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	return send, bufio.NewScanner(stdout)
}

func readAck(t *testing.T, acks *bufio.Scanner) (seq, id int64) {
	t.Helper()
	if !acks.Scan() {
		t.Fatalf("writer process ended: %v", acks.Err())
	}
	if _, err := fmt.Sscan(acks.Text(), &seq, &id); err != nil {
		t.Fatalf("writer process: bad line %q", acks.Text())
	}
	return seq, id
}

// TestHeadSeesOtherProcess: a head read in this process, then a commit by
// another process to the same thread (sometimes followed by a checkpoint
// that starts the WAL over): the next Head returns that commit. The
// thread's head was read, and answered from memory, in between.
func TestHeadSeesOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	th, err := b.Thread(ctx, "x", "h", true)
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Thread(ctx, "x", "other", true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Append(ctx, []backend.NewCommit{{Thread: other.ID, Seq: 1, Root: []byte("r"), Meta: []byte("{}")}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	otherHead := res[0].Commit

	send, acks := startHeadsChild(t, path)
	for i := range 40 {
		for range 3 { // the second and third come from memory
			if _, _, err := b.Head(ctx, th.ID); err != nil {
				t.Fatal(err)
			}
		}
		cmd := "append"
		if i%4 == 3 {
			cmd = "restart"
		}
		send(cmd)
		seq, id := readAck(t, acks)
		c, ok, err := b.Head(ctx, th.ID)
		if err != nil || !ok || c.Seq != seq || c.ID != id || string(c.Root) != "child" {
			t.Fatalf("%s %d: Head = seq %d id %d (%v, %v), want seq %d id %d, stored by the other process before the read began", cmd, i, c.Seq, c.ID, ok, err, seq, id)
		}
		if c, _, err := b.Head(ctx, other.ID); err != nil || c.ID != otherHead.ID {
			t.Fatalf("thread no one wrote: Head = %+v, %v; want %+v", c, err, otherHead)
		}
	}
	if _, ok := b.readHeads.current(); !ok && runtime.GOOS == "linux" {
		t.Error("the WAL index's header cannot be read: Head asks SQLite every time")
	}
}

// TestHeadNeverOlderThanAcknowledged: while another process and a
// Backend of this one append to one thread, readers of a third Backend
// check that every Head is at least the newest commit acknowledged to
// either writer before the Head began.
func TestHeadNeverOlderThanAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	open := func() *Backend {
		b, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	reader, writer := open(), open()
	th, err := reader.Thread(ctx, "x", "h", true)
	if err != nil {
		t.Fatal(err)
	}
	var acked atomic.Int64 // the highest seq a writer was told is stored
	ack := func(seq int64) {
		for {
			old := acked.Load()
			if seq <= old || acked.CompareAndSwap(old, seq) {
				return
			}
		}
	}
	const n = 300
	send, acks := startHeadsChild(t, path)
	send(fmt.Sprintf("run %d", n))
	var writers, readers sync.WaitGroup
	done := make(chan struct{})
	writers.Go(func() {
		for range n {
			if !acks.Scan() {
				t.Errorf("writer process ended: %v", acks.Err())
				return
			}
			var seq int64
			fmt.Sscan(acks.Text(), &seq)
			ack(seq)
		}
	})
	writers.Go(func() { // a writer in this process, on the same thread
		for range n {
			h, _, err := writer.Head(ctx, th.ID)
			if err != nil {
				t.Error(err)
				return
			}
			res, err := writer.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: h.Seq + 1, Root: []byte("local"), Meta: []byte("{}")}})
			if err != nil {
				t.Error(err)
				return
			}
			if res[0].Err == nil {
				ack(res[0].Commit.Seq)
			}
		}
	})
	var reads atomic.Int64
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				want := acked.Load()
				c, _, err := reader.Head(ctx, th.ID)
				if err != nil {
					t.Error(err)
					return
				}
				if c.Seq < want {
					t.Errorf("Head = seq %d, but seq %d was acknowledged before it began", c.Seq, want)
					return
				}
				reads.Add(1)
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	t.Logf("%d heads read while %d commits were acknowledged", reads.Load(), acked.Load())
}

// TestHeadTwoBackendsOneFile: two Backends of this process share the WAL
// index; closing one leaves the other's reads correct, and a third opened
// after sees what the second wrote.
func TestHeadTwoBackendsOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "two.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	th, err := a.Thread(ctx, "x", "h", true)
	if err != nil {
		t.Fatal(err)
	}
	appendTo := func(be *Backend, seq int64) backend.Commit {
		t.Helper()
		res, err := be.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}")}})
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res)
		}
		return res[0].Commit
	}
	check := func(be *Backend, want backend.Commit) {
		t.Helper()
		for range 2 {
			c, ok, err := be.Head(ctx, th.ID)
			if err != nil || !ok || c.ID != want.ID || c.Seq != want.Seq {
				t.Fatalf("Head = %+v (%v, %v), want seq %d id %d", c, ok, err, want.Seq, want.ID)
			}
		}
	}
	c1 := appendTo(a, 1)
	check(a, c1)
	check(b, c1)
	c2 := appendTo(b, 2)
	check(a, c2)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c3 := appendTo(b, 3)
	check(b, c3)
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check(c, c3)
	c4 := appendTo(c, 4)
	check(b, c4)
}
