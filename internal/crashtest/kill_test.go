package crashtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// The kill loop: a writer process runs killWorkers goroutines, each on a
// thread of its own, each making a deterministic sequence of mutations
// (op k of worker w is opFor(w, k)) and printing "ack W K" once op K is
// acknowledged. The parent kills it with SIGKILL at a random moment,
// checks the database, and starts it again where it stopped.
const killWorkers = 4

// op is one mutation of the kill loop's writer.
type op struct {
	kind    string // write, append, batch, edit, delete, checkpoint
	path    string
	content string // write: the content; append: the text
	name    string // checkpoint
}

// opFor returns op k of worker w: the same in the child that makes it and
// in the parent that checks it.
func opFor(w, k int) op {
	m := bench.NewMulberry32(uint32(w)*0x9E3779B1 + uint32(k+1)*0x85EBCA77)
	r := m.Next() % 20
	f := "files/f" + strconv.Itoa(int(m.Next()%8)) + ".md"
	switch {
	case r < 6:
		size := 200 + int(m.Next()%4000)
		if m.Next()%5 < 2 {
			size = 10_000 + int(m.Next()%50_000) // chunked: several chunks per file
		}
		return op{kind: "write", path: f, content: genContent(m, fmt.Sprintf("header w%d op %d\n", w, k), size)}
	case r < 10:
		return op{kind: "append", path: "log.txt", content: fmt.Sprintf("w%d op %d %s\n", w, k, strings.Repeat(".", int(m.Next()%60)))}
	case r < 13:
		return op{kind: "batch", path: "b/" + strconv.Itoa(int(m.Next()%3)), content: genContent(m, fmt.Sprintf("batch w%d op %d\n", w, k), 100+int(m.Next()%3000))}
	case r < 16:
		return op{kind: "edit", path: f, content: fmt.Sprintf("edited w%d op %d\n", w, k)}
	case r < 18:
		return op{kind: "delete", path: f}
	default:
		return op{kind: "checkpoint", name: "cp-" + strconv.Itoa(k)}
	}
}

// genContent returns header followed by filler lines up to size bytes.
func genContent(m *bench.Mulberry32, header string, size int) string {
	var b strings.Builder
	b.Grow(size + 80)
	b.WriteString(header)
	for n := 1; b.Len() < size; n++ {
		b.WriteString("line " + strconv.Itoa(n) + ": ")
		for range 40 + int(m.Next()%30) {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz"[m.Next()%26])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// firstLine returns s up to and including its first "\n".
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

// apply applies o to a model of a thread's files.
func (o op) apply(files map[string]string) {
	switch o.kind {
	case "write":
		files[o.path] = o.content
	case "append":
		files[o.path] += o.content
	case "batch":
		files[o.path+"-x.md"] = o.content
		files[o.path+"-y.md"] = o.content
		files["log.txt"] += firstLine(o.content)
	case "edit":
		if c, ok := files[o.path]; ok {
			files[o.path] = o.content + strings.TrimPrefix(c, firstLine(c))
		}
	case "delete":
		delete(files, o.path)
	}
}

// do makes o on ws.
func (o op) do(ctx context.Context, ws *satchel.Workspace) error {
	switch o.kind {
	case "write":
		return ws.Write(ctx, o.path, o.content)
	case "append":
		return ws.Append(ctx, o.path, o.content)
	case "batch":
		return ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
			if err := b.Write(ctx, o.path+"-x.md", o.content); err != nil {
				return err
			}
			if err := b.Write(ctx, o.path+"-y.md", o.content); err != nil {
				return err
			}
			return b.Append(ctx, "log.txt", firstLine(o.content))
		})
	case "edit":
		c, err := ws.Read(ctx, o.path)
		if errors.Is(err, satchel.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = ws.StrReplace(ctx, o.path, firstLine(c), o.content, false)
		return err
	case "delete":
		return ws.Delete(ctx, o.path)
	case "checkpoint":
		_, err := ws.Checkpoint(ctx, o.name)
		if errors.Is(err, satchel.ErrExists) {
			return nil // made before a kill, not acknowledged: made again
		}
		return err
	}
	return fmt.Errorf("unknown op %q", o.kind)
}

func init() {
	roles["writer"] = killWriter
}

// killWriter is the child of the kill loop: args are the first op of each
// worker, comma-separated. It runs until killed.
func killWriter(ctx context.Context, st *satchel.Store, args string, out io.Writer) error {
	starts := strings.Split(args, ",")
	if len(starts) != killWorkers {
		return fmt.Errorf("want %d starts, got %q", killWorkers, args)
	}
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	errs := make(chan error, killWorkers)
	say("ready")
	for w := range killWorkers {
		k0, err := strconv.Atoi(starts[w])
		if err != nil {
			return err
		}
		go func() {
			ws, err := st.Workspace(ctx, "crash", "w"+strconv.Itoa(w))
			if err != nil {
				errs <- err
				return
			}
			for k := k0; ; k++ {
				if err := opFor(w, k).do(ctx, ws); err != nil {
					errs <- fmt.Errorf("worker %d op %d (%s): %w", w, k, opFor(w, k).kind, err)
					return
				}
				say("ack %d %d", w, k)
			}
		}()
	}
	return <-errs
}

// TestKillLoop kills the writer at random moments, at least 50 times per
// backend, and checks after each kill that the database opens, that
// every acknowledged op is reflected exactly (at most the one op each
// worker had in flight may be there too, whole), that no file is
// partial, and that acknowledged checkpoints resolve.
func TestKillLoop(t *testing.T) {
	longTest(t)
	kills := 60
	if s := os.Getenv("SATCHEL_CRASHTEST_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	for _, db := range databases(t) {
		t.Run(db.name, func(t *testing.T) { killLoop(t, db, kills) })
	}
}

func killLoop(t *testing.T, db database, kills int) {
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SATCHEL_CRASHTEST_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("kill moments drawn from SATCHEL_CRASHTEST_SEED=%d", seed)
	next := make([]int, killWorkers) // the next op of each worker
	models := make([]map[string]string, killWorkers)
	checkpoints := make([][]string, killWorkers)
	for w := range models {
		models[w] = map[string]string{}
	}
	maxWait := 60 * time.Millisecond
	if db.name == "postgres" {
		maxWait = 200 * time.Millisecond
	}
	acked, inflightLanded := 0, 0
	start := time.Now()
	for kill := 0; kill < kills; kill++ {
		args := make([]string, killWorkers)
		for w := range args {
			args[w] = strconv.Itoa(next[w])
		}
		c := startChild(t, "writer", db.dsn, strings.Join(args, ","))
		var lines []string
		select {
		case l, ok := <-c.lines:
			if !ok || l != "ready" {
				rest, err := c.wait()
				t.Fatalf("kill %d: the writer did not start: %q %v (%v): %s", kill, l, rest, err, c.stderr)
			}
		case <-time.After(60 * time.Second):
			c.cmd.Process.Kill()
			t.Fatalf("kill %d: the writer did not start in 60s", kill)
		}
		if kill%4 != 0 {
			// Three kills in four come after the writer's first
			// acknowledgement, so that each tests something however
			// slowly a loaded machine starts the writer; the fourth may
			// come while it opens the store or runs its first ops.
			select {
			case l, ok := <-c.lines:
				if ok {
					lines = append(lines, l)
				}
			case <-time.After(60 * time.Second):
				c.cmd.Process.Kill()
				t.Fatalf("kill %d: the writer acknowledged nothing in 60s", kill)
			}
		}
		time.Sleep(time.Duration(rng.Int64N(int64(maxWait))))
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		rest, err := c.wait()
		lines = append(lines, rest...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: the writer ended on its own (%v): %s", kill, err, c.stderr)
		}
		// Replay the acknowledgements into the models.
		for _, l := range lines {
			var w, k int
			if _, err := fmt.Sscanf(l, "ack %d %d", &w, &k); err != nil || w < 0 || w >= killWorkers {
				t.Fatalf("kill %d: bad line %q", kill, l)
			}
			if k != next[w] {
				t.Fatalf("kill %d: worker %d acknowledged op %d, expected %d", kill, w, k, next[w])
			}
			o := opFor(w, k)
			o.apply(models[w])
			if o.kind == "checkpoint" {
				checkpoints[w] = append(checkpoints[w], o.name)
			}
			next[w]++
			acked++
		}
		landed := verify(t, ctx, db, kill, next, models, checkpoints)
		inflightLanded += landed
	}
	t.Logf("%s: %d kills in %v; %d ops acknowledged; %d in-flight ops found committed after the kill",
		db.name, kills, time.Since(start).Round(time.Millisecond), acked, inflightLanded)
	if acked < kills {
		t.Errorf("only %d ops acknowledged over %d kills: the kills came too early to test anything", acked, kills)
	}
}

// verify opens the database after a kill and checks each worker's thread
// against its model: equal to it, or to it plus the worker's next op (the
// one in flight when the process died), which is then taken as done. It
// returns how many in-flight ops had landed.
func verify(t *testing.T, ctx context.Context, db database, kill int, next []int, models []map[string]string, checkpoints [][]string) int {
	t.Helper()
	if db.name == "sqlite" {
		quickCheck(t, db.dsn)
	}
	st, err := openStore(ctx, db.dsn)
	if err != nil {
		t.Fatalf("kill %d: the database does not open: %v", kill, err)
	}
	defer st.Close()
	rep, err := st.Check(ctx)
	if err != nil {
		t.Fatalf("kill %d: the storage check did not run: %v", kill, err)
	}
	if len(rep.Faults) > 0 {
		t.Fatalf("kill %d: the storage check found %d faults: %q", kill, len(rep.Faults), rep.Faults)
	}
	landed := 0
	for w := range models {
		ws, err := st.Workspace(ctx, "crash", "w"+strconv.Itoa(w))
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(ctx, ws)
		if err != nil {
			t.Fatalf("kill %d: worker %d: reading the thread: %v", kill, w, err)
		}
		if maps.Equal(got, models[w]) {
			continue
		}
		with := maps.Clone(models[w])
		o := opFor(w, next[w])
		o.apply(with)
		if !maps.Equal(got, with) {
			t.Fatalf("kill %d: worker %d: the thread is neither its %d acknowledged ops nor those plus op %d (%s):\n%s",
				kill, w, next[w], next[w], o.kind, describeDiff(models[w], got))
		}
		models[w] = with
		next[w]++
		landed++
	}
	for w, cps := range checkpoints {
		ws, _ := st.Workspace(ctx, "crash", "w"+strconv.Itoa(w))
		for _, name := range cps {
			if _, err := ws.At(ctx, name); err != nil {
				t.Fatalf("kill %d: worker %d: acknowledged checkpoint %s: %v", kill, w, name, err)
			}
		}
	}
	return landed
}

// readAll returns every file of a workspace's head with its content.
func readAll(ctx context.Context, ws *satchel.Workspace) (map[string]string, error) {
	paths, err := ws.List(ctx, "", satchel.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		c, err := ws.Read(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out[p] = c
	}
	return out, nil
}

// describeDiff says how got differs from want, briefly.
func describeDiff(want, got map[string]string) string {
	var b strings.Builder
	keys := slices.Sorted(maps.Keys(want))
	for p := range got {
		if _, ok := want[p]; !ok {
			keys = append(keys, p)
		}
	}
	for _, p := range keys {
		w, okW := want[p]
		g, okG := got[p]
		switch {
		case !okG:
			fmt.Fprintf(&b, "  %s: missing (want %d bytes)\n", p, len(w))
		case !okW:
			fmt.Fprintf(&b, "  %s: unexpected (%d bytes)\n", p, len(g))
		case w != g:
			fmt.Fprintf(&b, "  %s: %d bytes, want %d; first line %q, want %q\n", p, len(g), len(w), firstLine(g), firstLine(w))
		}
	}
	return b.String()
}

// quickCheck runs SQLite's PRAGMA quick_check on the file.
func quickCheck(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA quick_check").Scan(&res); err != nil {
		t.Fatalf("quick_check: %v", err)
	}
	if res != "ok" {
		t.Fatalf("quick_check: %s", res)
	}
}
