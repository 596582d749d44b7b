package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// The cross-process test re-executes the test binary; these variables tell
// the child what to do.
const (
	childPathEnv   = "SATCHEL_SQLITE_CHILD_DB"
	childNameEnv   = "SATCHEL_SQLITE_CHILD_NAME"
	childTargetEnv = "SATCHEL_SQLITE_CHILD_TARGET"
)

func TestMain(m *testing.M) {
	if p := os.Getenv(childHeadsEnv); p != "" {
		if err := headsChild(context.Background(), p, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if p := os.Getenv(childPathEnv); p != "" {
		target, _ := strconv.ParseInt(os.Getenv(childTargetEnv), 10, 64)
		if err := raceAppends(context.Background(), p, os.Getenv(childNameEnv), target, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// raceAppends opens the database at path and appends to thread "race" of
// scope "x" until its head reaches target, re-reading the head whenever it
// loses; it writes "seq id" for every commit it won.
func raceAppends(ctx context.Context, path, name string, target int64, out *os.File) error {
	b, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer b.Close()
	return raceOn(ctx, b, name, target, func(seq, id int64) { fmt.Fprintf(out, "%d %d\n", seq, id) })
}

func raceOn(ctx context.Context, b backend.Backend, name string, target int64, won func(seq, id int64)) error {
	th, err := b.Thread(ctx, "x", "race", true)
	if err != nil {
		return err
	}
	for {
		h, _, err := b.Head(ctx, th.ID)
		if err != nil {
			return err
		}
		seq := h.Seq + 1
		if seq > target {
			return nil
		}
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte(name), Meta: []byte("{}"), Pack: []byte(name)}})
		if err != nil {
			return err
		}
		switch {
		case res[0].Err == nil:
			won(seq, res[0].Commit.ID)
		case !errors.Is(res[0].Err, backend.ErrStale):
			return res[0].Err
		}
	}
}

// TestCrossProcess races appends to one thread from two other processes
// and from two Backends of this one (two goroutines each), all on one
// file: every sequence number must be stored exactly once, by the writer
// that was told it won.
func TestCrossProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	const target = 400
	type win struct {
		writer string
		id     int64
	}
	var (
		mu   sync.Mutex
		wins = map[int64][]win{}
	)
	record := func(writer string, seq, id int64) {
		mu.Lock()
		wins[seq] = append(wins[seq], win{writer, id})
		mu.Unlock()
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 2 {
		name := fmt.Sprintf("proc%d", i)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childPathEnv+"="+path, childNameEnv+"="+name, childTargetEnv+"="+strconv.Itoa(target))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var seq, id int64
				if _, err := fmt.Sscan(sc.Text(), &seq, &id); err != nil {
					errs <- fmt.Errorf("%s: bad line %q", name, sc.Text())
					continue
				}
				record(name, seq, id)
			}
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Errorf("%s: %v: %s", name, err, stderr.String())
			}
		})
	}
	for i := range 2 {
		b, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for j := range 2 {
			name := fmt.Sprintf("local%d.%d", i, j)
			wg.Go(func() {
				if err := raceOn(ctx, b, name, target, func(seq, id int64) { record(name, seq, id) }); err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	elapsed := time.Since(start)

	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	th, err := b.Thread(ctx, "x", "race", false)
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Log(ctx, th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != target {
		t.Errorf("log has %d commits, want %d", len(l), target)
	}
	perWriter := map[string]int{}
	for _, c := range l {
		w := wins[c.Seq]
		if len(w) != 1 {
			t.Errorf("seq %d was won %d times: %v", c.Seq, len(w), w)
			continue
		}
		if w[0].id != c.ID || string(c.Root) != w[0].writer {
			t.Errorf("seq %d: stored ID %d by %q, but %q was told it won with ID %d", c.Seq, c.ID, c.Root, w[0].writer, w[0].id)
		}
		perWriter[w[0].writer]++
	}
	if len(wins) != target {
		t.Errorf("%d seqs won, want %d", len(wins), target)
	}
	t.Logf("%d commits in %v by 2 processes and 2x2 local writers; wins per writer: %v", target, elapsed, perWriter)
}
