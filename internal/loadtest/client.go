package loadtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
)

// Prepare writes what the shared threads start with (every client's slot
// line, for procs processes) into a fresh store.
func Prepare(ctx context.Context, st *satchel.Store, procs int) error {
	for s := range Shared {
		ws, err := st.Workspace(ctx, "load", "shared-"+strconv.Itoa(s))
		if err != nil {
			return err
		}
		var slots strings.Builder
		for id := 0; id < procs*Clients; id++ {
			if slotThread(id) == s {
				slots.WriteString(slotLine(id, 0))
			}
		}
		if err := ws.Write(ctx, "slots.md", slots.String()); err != nil {
			return err
		}
	}
	return nil
}

// RunClient is client process p: it opens PostgreSQL at dsn, runs Clients
// concurrent clients of the mix for the duration d, and prints a line
// "ack P J K" for each acknowledged mutation (operation K of client J),
// "lat P J US..." with each client's operation latencies in µs, then
// "stats P OPS MUTATIONS APPENDS COMMITS STALE APPEND-NS CONFLICTS".
// Check replays these lines.
func RunClient(ctx context.Context, dsn string, p int, d time.Duration, mix string, stdout io.Writer) error {
	if !validMix(mix) {
		return fmt.Errorf("loadtest: unknown mix %q: choose among %s, %s, %s", mix, Mixed, Private, Hot)
	}
	b, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	cb := &countingBackend{Backend: b, pg: b}
	st := satchel.New(cb)
	defer st.Close()
	shared := make([]*satchel.Workspace, Shared)
	for s := range shared {
		if shared[s], err = st.Workspace(ctx, "load", "shared-"+strconv.Itoa(s)); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		fmt.Fprintf(out, format+"\n", a...)
		mu.Unlock()
	}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	errs := make(chan error, Clients)
	counts := make([][2]int, Clients)
	lats := make([][]time.Duration, Clients)
	var conflicts atomic.Int64
	for j := range Clients {
		wg.Go(func() {
			ws, err := st.Workspace(ctx, "load", fmt.Sprintf("p%d-c%d", p, j))
			if err != nil {
				errs <- err
				return
			}
			model := map[string]string{}
			id, slot := p*Clients+j, 0
			for k := 0; time.Now().Before(deadline); k++ {
				o := opFor(p, j, k, mix)
				t0 := time.Now()
				err := retryConflicts(&conflicts, func() (err error) {
					switch o.kind {
					case "write":
						err = ws.Write(ctx, o.path, o.text)
					case "edit":
						var c string
						c, err = ws.Read(ctx, o.path)
						if errors.Is(err, satchel.ErrNotFound) {
							err = nil
							break
						}
						if err == nil {
							_, err = ws.StrReplace(ctx, o.path, firstLine(c), o.text, false)
						}
					case "append":
						err = ws.Append(ctx, o.path, o.text)
					case "sappend":
						err = shared[o.shared].Append(ctx, o.path, o.text)
					case "slot":
						_, err = shared[slotThread(id)].StrReplace(ctx, o.path, slotLine(id, slot), slotLine(id, slot+1), false)
						if err == nil {
							slot++
						}
					case "swrite":
						err = shared[o.shared].Write(ctx, o.path, o.text)
					case "read":
						var c string
						c, err = ws.Read(ctx, o.path)
						want, ok := model[o.path]
						switch {
						case errors.Is(err, satchel.ErrNotFound) && !ok:
							err = nil
						case err == nil && c != want:
							err = fmt.Errorf("read %s: %d bytes, not the %d last written", o.path, len(c), len(want))
						}
						if err == nil {
							_, err = shared[o.shared].Read(ctx, "log.txt")
							if errors.Is(err, satchel.ErrNotFound) {
								err = nil
							}
						}
					}
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("process %d client %d op %d (%s): %w", p, j, k, o.kind, err)
					return
				}
				lats[j] = append(lats[j], time.Since(t0))
				o.applyPrivate(model)
				counts[j][0]++
				if o.kind != "read" {
					counts[j][1]++
					say("ack %d %d %d", p, j, k)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	var ops, muts int
	for j, c := range counts {
		ops += c[0]
		muts += c[1]
		var l strings.Builder
		fmt.Fprintf(&l, "lat %d %d", p, j)
		for _, d := range lats[j] {
			l.WriteString(" " + strconv.FormatInt(d.Microseconds(), 10))
		}
		say("%s", l.String())
	}
	say("stats %d %d %d %d %d %d %d %d", p, ops, muts, cb.appends.Load(), cb.commits.Load(), cb.stale.Load(), cb.appendNs.Load(), conflicts.Load())
	if err := out.Flush(); err != nil {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// maxConflicts bounds the attempts of one operation refused with
// ErrConflict (the engine gave up re-applying it: other writers kept
// moving the thread). Such an operation did not land; a client retries
// it, as the error says to.
const maxConflicts = 1000

func retryConflicts(n *atomic.Int64, do func() error) error {
	for i := 0; ; i++ {
		err := do()
		if !errors.Is(err, satchel.ErrConflict) || i == maxConflicts {
			return err
		}
		n.Add(1)
	}
}

// countingBackend counts what a client process asks of PostgreSQL. It
// declares the optional capabilities of the backend that the commit path
// and the walks use, which embedding the Backend interface alone would hide (package
// backend, capabilities.go).
type countingBackend struct {
	backend.Backend
	pg                                *postgres.Backend
	appends, commits, stale, appendNs atomic.Int64
}

// AppendConcurrency implements backend.ConcurrentAppender.
func (c *countingBackend) AppendConcurrency() int { return c.pg.AppendConcurrency() }

// Remote implements backend.Remote.
func (c *countingBackend) Remote() {}

// LockThread implements backend.ThreadLocker.
func (c *countingBackend) LockThread(ctx context.Context, thread, known int64) (backend.Commit, bool, string, func(), error) {
	return c.pg.LockThread(ctx, thread, known)
}

// HeadPack implements backend.HeadPackReader.
func (c *countingBackend) HeadPack(ctx context.Context, thread, known int64) (backend.Commit, bool, string, error) {
	return c.pg.HeadPack(ctx, thread, known)
}

// Packs implements backend.PacksReader, so that a client's walks read
// packs as they would from the backend itself.
func (c *countingBackend) Packs(ctx context.Context, ids []int64, maxBytes int64) (map[int64]string, []int64, error) {
	return c.pg.Packs(ctx, ids, maxBytes)
}

func (c *countingBackend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	t0 := time.Now()
	res, err := c.Backend.Append(ctx, ncs)
	c.appendNs.Add(int64(time.Since(t0)))
	c.appends.Add(1)
	c.commits.Add(int64(len(ncs)))
	for _, r := range res {
		if errors.Is(r.Err, backend.ErrStale) {
			c.stale.Add(1)
		}
	}
	return res, err
}

// ReadLines reads a client process's output, whose lat lines are long.
func ReadLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<28)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}
