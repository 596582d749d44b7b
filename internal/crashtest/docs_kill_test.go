package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel"
)

// The documents' kill loop: a writer process runs docWorkers goroutines
// at once, whose sets the store batches into shared transactions; worker
// w's set k stores {"id": "w<w>-<k%docKeys>", "k": k} and prints "ack W K
// VERSION" once acknowledged. The parent kills it at a random moment and
// checks that every acknowledged set is there with its version (the one
// set each worker had in flight may have landed too, whole), then starts
// it again where it stopped.
const (
	docWorkers = 16
	docKeys    = 5
)

var docKillProject = fstest.MapFS{"stores/kv.json": {Data: []byte(`{
  "key": "{id}",
  "schema": { "id": { "type": "string" }, "k": { "type": "number" } },
  "history": { "versions": 2 }
}`)}}

func docKillKey(w, k int) string { return fmt.Sprintf("w%d-%d", w, k%docKeys) }

func init() { roles["docwriter"] = docWriter }

func docCollection(ctx context.Context, st *satchel.Store) (*satchel.Collection, error) {
	p, err := satchel.LoadProjectFS(docKillProject)
	if err != nil {
		return nil, err
	}
	return st.Collection(ctx, p, "crash", "kv")
}

// docWriter is the child: args are the first set of each worker,
// comma-separated. It runs until killed.
func docWriter(ctx context.Context, st *satchel.Store, args string, out io.Writer) error {
	starts := strings.Split(args, ",")
	if len(starts) != docWorkers {
		return fmt.Errorf("want %d starts, got %q", docWorkers, args)
	}
	c, err := docCollection(ctx, st)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	errs := make(chan error, docWorkers)
	say("ready")
	for w := range docWorkers {
		k0, err := strconv.Atoi(starts[w])
		if err != nil {
			return err
		}
		go func() {
			for k := k0; ; k++ {
				_, v, err := c.Set(ctx, map[string]any{"id": docKillKey(w, k), "k": k})
				if err != nil {
					errs <- fmt.Errorf("worker %d set %d: %w", w, k, err)
					return
				}
				say("ack %d %d %d", w, k, v)
			}
		}()
	}
	return <-errs
}

// TestDocKillLoop kills a process whose sixteen clients set documents at
// once (their sets sharing transactions) at random moments, and checks
// after each kill that every acknowledged set is there, with the version
// it was acknowledged with.
func TestDocKillLoop(t *testing.T) {
	longTest(t)
	kills := 20
	if s := os.Getenv("SATCHEL_CRASHTEST_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	for _, db := range databases(t) {
		t.Run(db.name, func(t *testing.T) { docKillLoop(t, db, kills) })
	}
}

type docState struct {
	version int64
	k       int
}

func docKillLoop(t *testing.T, db database, kills int) {
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SATCHEL_CRASHTEST_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	t.Logf("kill moments drawn from SATCHEL_CRASHTEST_SEED=%d", seed)
	next := make([]int, docWorkers)
	model := map[string]docState{} // key → what its last acknowledged set stored
	maxWait := 100 * time.Millisecond
	if db.name == "postgres" {
		maxWait = 300 * time.Millisecond
	}
	acked, landed := 0, 0
	for kill := 0; kill < kills; kill++ {
		args := make([]string, docWorkers)
		for w := range args {
			args[w] = strconv.Itoa(next[w])
		}
		c := startChild(t, "docwriter", db.dsn, strings.Join(args, ","))
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
		time.Sleep(time.Duration(rng.Int64N(int64(maxWait)))) // the kill's moment, not a wait
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		lines, err := c.wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: the writer ended on its own (%v): %s", kill, err, c.stderr)
		}
		for _, l := range lines {
			var w, k int
			var v int64
			if _, err := fmt.Sscanf(l, "ack %d %d %d", &w, &k, &v); err != nil || w < 0 || w >= docWorkers {
				t.Fatalf("kill %d: bad line %q", kill, l)
			}
			key := docKillKey(w, k)
			if k != next[w] || v != model[key].version+1 {
				t.Fatalf("kill %d: worker %d acknowledged set %d as version %d; expected set %d, version %d", kill, w, k, v, next[w], model[key].version+1)
			}
			model[key] = docState{v, k}
			next[w]++
			acked++
		}
		st, err := openStore(ctx, db.dsn)
		if err != nil {
			t.Fatalf("kill %d: open: %v", kill, err)
		}
		coll, err := docCollection(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		for w := range docWorkers {
			for j := range docKeys {
				key := fmt.Sprintf("w%d-%d", w, j)
				want, inflight := model[key], docKillKey(w, next[w]) == key
				d, err := coll.Get(ctx, key, false)
				var got docState
				switch {
				case errors.Is(err, satchel.ErrNotFound):
				case err != nil:
					t.Fatalf("kill %d: get %s: %v", kill, key, err)
				default:
					var m map[string]any
					if err := d.Decode(&m); err != nil {
						t.Fatal(err)
					}
					k, _ := strconv.Atoi(fmt.Sprint(m["k"]))
					got = docState{d.Version, k}
				}
				switch {
				case got == want:
				case inflight && got == docState{want.version + 1, next[w]}:
					// The set in flight committed before the kill,
					// unacknowledged: the model takes it, and the
					// writer goes on after it.
					model[key] = got
					next[w]++
					landed++
				default:
					t.Fatalf("kill %d: %s is version %d of set %d; its last acknowledged set was version %d, set %d (lost)",
						kill, key, got.version, got.k, want.version, want.k)
				}
			}
		}
		st.Close()
	}
	t.Logf("%s: %d kills, %d sets acknowledged, %d in-flight sets found committed after a kill", db.name, kills, acked, landed)
	if acked < kills {
		t.Errorf("only %d sets acknowledged over %d kills: the kills came too early to test anything", acked, kills)
	}
}
