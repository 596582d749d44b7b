package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel"
)

// W2Options configure the W2 collections workload.
type W2Options struct {
	System string // e.g. "satchel-sqlite"
	N      int    // documents (default 100,000)
	Seed   uint32 // default 1
	// Indexed says whether the store was defined with
	// W2StoreDefinitionIndexed (only reported: the store decides).
	Indexed bool
	// Clients is how many clients run the set and update phases at once
	// (default 1), each setting its own documents (client k those with
	// i % Clients == k). With more than one, the read phases are left out:
	// after the updates every document is read back (untimed) and must be
	// there with the version its last set was acknowledged with.
	Clients int
	// Progress, when set, is called after each operation.
	Progress func()
}

// W2Queries is the number of queries of each query phase.
const W2Queries = 1000

// W2Ops returns how many operations W2 runs at scale n (for progress bars).
func W2Ops(n int) int { return 2*n + 3*(n/10) + 2*W2Queries + (n+99)/100 }

// w2Updated reports whether document i is updated by the update phase
// (and read by the history phase): every tenth document.
func w2Updated(i int) bool { return i%10 == 0 }

// w2Removed reports whether the remove phase removes document i: every
// tenth document, half-way between the updated ones.
func w2Removed(i int) bool { return i%10 == 5 }

// RunW2 runs the W2 workload of WORKLOADS.md on an empty collection of the
// research-notes store (W2StoreDefinition or W2StoreDefinitionIndexed),
// checks each phase's expectation, and reports each phase's figures. The
// collection must be an operator's opened with satchel.Force(): the store
// is not deletable, and the remove phase removes as an operator.
func RunW2(ctx context.Context, c *satchel.Collection, o W2Options, report func(Result)) error {
	if o.N <= 0 {
		o.N = W2DefaultN
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	n := o.N
	tick := o.Progress
	if tick == nil {
		tick = func() {}
	}
	system := o.System
	if o.Indexed {
		system += "-indexed"
	}

	// Every document, generated before the clock starts.
	docs := make([]map[string]any, n)
	for i := range docs {
		docs[i] = W2Doc(o.Seed, i, 0)
	}

	clients := max(o.Clients, 1)
	done := func(t *timer, phase string) {
		r := t.result(system, "W2", phase)
		r.Clients = clients
		report(r)
	}
	acked := make([]int64, n) // the version each document's last set was acknowledged with
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	t, err := w2Sets(ctx, c, clients, all, func(i int) map[string]any { return docs[i] }, 1, acked, tick)
	if err != nil {
		return err
	}
	done(t, "set")

	if clients == 1 {
		t = newTimer(n)
		for i := 0; i < n; i++ {
			var d satchel.Document
			if err := t.op(func() (err error) { d, err = c.Get(ctx, W2Key(i), false); return }); err != nil {
				return fmt.Errorf("bench W2 get %d: %w", i, err)
			}
			if d.Version != 1 || (i%997 == 0 && !sameDoc(d, docs[i])) {
				return mismatch("W2", "get", "document %d: version %d or content differs", i, d.Version)
			}
			tick()
		}
		done(t, "get")
	}

	updates := make(map[int]map[string]any, n/10)
	var updated []int
	for i := 0; i < n; i++ {
		if w2Updated(i) {
			updates[i] = W2Doc(o.Seed, i, 1)
			updated = append(updated, i)
		}
	}
	t, err = w2Sets(ctx, c, clients, updated, func(i int) map[string]any { return updates[i] }, 2, acked, tick)
	if err != nil {
		return err
	}
	for _, i := range updated {
		docs[i] = updates[i]
	}
	done(t, "update")
	if clients > 1 {
		return w2CheckAcked(ctx, c, acked)
	}

	// query-eq: company_id = 'cXXXX' has the documents i ≡ XXXX (mod 1000),
	// in key order: topic t000, t001, ...
	t = newTimer(W2Queries)
	for q := 0; q < W2Queries; q++ {
		company := q % 1000
		var pg satchel.DocumentPage
		where := "company_id = '" + W2CompanyID(company) + "'"
		if err := t.op(func() (err error) {
			pg, err = c.Query(ctx, satchel.QueryRequest{Where: where, Limit: 20})
			return
		}); err != nil {
			return fmt.Errorf("bench W2 query-eq: %w", err)
		}
		want := 0
		for i := company; i < n && want < 20; i += 1000 {
			if pg.Documents != nil && want < len(pg.Documents) && pg.Documents[want].Key != W2Key(i) {
				return mismatch("W2", "query-eq", "%s: document %d is %s, want %s", where, want, pg.Documents[want].Key, W2Key(i))
			}
			want++
		}
		if len(pg.Documents) != want {
			return mismatch("W2", "query-eq", "%s: %d documents, want %d", where, len(pg.Documents), want)
		}
		tick()
	}
	done(t, "query-eq")

	// query-in: the first 20 keys among topics t001 and t002 with
	// confidence > 0.5, by the current versions.
	const whereIn = "topic IN ['t001','t002'] AND confidence > 0.5"
	var wantIn []string
	for i := 1000; i < min(n, 3000); i++ {
		if docs[i]["confidence"].(float64) > 0.5 {
			wantIn = append(wantIn, W2Key(i))
		}
	}
	sort.Strings(wantIn)
	wantIn = wantIn[:min(len(wantIn), 20)]
	t = newTimer(W2Queries)
	for q := 0; q < W2Queries; q++ {
		var pg satchel.DocumentPage
		if err := t.op(func() (err error) {
			pg, err = c.Query(ctx, satchel.QueryRequest{Where: whereIn, Limit: 20})
			return
		}); err != nil {
			return fmt.Errorf("bench W2 query-in: %w", err)
		}
		if got := keys(pg.Documents); strings.Join(got, " ") != strings.Join(wantIn, " ") {
			return mismatch("W2", "query-in", "keys %v, want %v", got, wantIn)
		}
		tick()
	}
	done(t, "query-in")

	t = newTimer(n/100 + 1)
	cursor, seen, prev := "", 0, ""
	for {
		var pg satchel.DocumentPage
		if err := t.op(func() (err error) { pg, err = c.List(ctx, 100, cursor); return }); err != nil {
			return fmt.Errorf("bench W2 list: %w", err)
		}
		for _, d := range pg.Documents {
			if d.Key <= prev {
				return mismatch("W2", "list", "key %s after %s", d.Key, prev)
			}
			prev = d.Key
		}
		seen += len(pg.Documents)
		tick()
		if pg.NextCursor == "" {
			break
		}
		cursor = pg.NextCursor
	}
	done(t, "list")
	if seen != n {
		return mismatch("W2", "list", "%d documents, want %d", seen, n)
	}

	t = newTimer(n / 10)
	for i := 0; i < n; i++ {
		if !w2Updated(i) {
			continue
		}
		var d satchel.Document
		if err := t.op(func() (err error) { d, err = c.Get(ctx, W2Key(i), true); return }); err != nil {
			return fmt.Errorf("bench W2 history %d: %w", i, err)
		}
		if d.Version != 2 || len(d.History) != 1 || d.History[0].Version != 1 ||
			(i%997 == 0 && !sameDoc(d.History[0], W2Doc(o.Seed, i, 0))) {
			return mismatch("W2", "history", "document %d: version %d, %d previous versions", i, d.Version, len(d.History))
		}
		tick()
	}
	done(t, "history")

	t = newTimer(n / 10)
	for i := 0; i < n; i++ {
		if !w2Removed(i) {
			continue
		}
		var ok bool
		if err := t.op(func() (err error) { ok, err = c.Remove(ctx, W2Key(i)); return }); err != nil {
			return fmt.Errorf("bench W2 remove %d: %w", i, err)
		}
		if !ok {
			return mismatch("W2", "remove", "document %d was not there", i)
		}
		tick()
	}
	done(t, "remove")
	for i := 5; i < n; i += 1000 {
		if _, err := c.Get(ctx, W2Key(i), false); !errors.Is(err, satchel.ErrNotFound) {
			return mismatch("W2", "remove", "document %d is still there (%v)", i, err)
		}
	}
	return nil
}

// w2Sets sets the documents doc(i) of the indexes items with clients
// clients at once, client k taking items k, k+clients, ...; each set must
// be acknowledged with version want, which acked records. The timer holds
// every set's latency and the phase's wall time.
func w2Sets(ctx context.Context, c *satchel.Collection, clients int, items []int, doc func(i int) map[string]any, want int64, acked []int64, tick func()) (*timer, error) {
	phase := "set"
	if want > 1 {
		phase = "update"
	}
	lats := make([][]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	t := newTimer(len(items))
	for k := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ct := &timer{lat: make([]time.Duration, 0, len(items)/clients+1)}
			defer func() { lats[k] = ct.lat }()
			for j := k; j < len(items); j += clients {
				i := items[j]
				var key string
				var v int64
				if err := ct.op(func() (err error) { key, v, err = c.Set(ctx, doc(i)); return }); err != nil {
					errs[k] = fmt.Errorf("bench W2 %s %d: %w", phase, i, err)
					return
				}
				if key != W2Key(i) || v != want {
					errs[k] = mismatch("W2", phase, "document %d: key %q version %d, want %q version %d", i, key, v, W2Key(i), want)
					return
				}
				acked[i] = v
				tick()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, l := range lats {
		t.lat = append(t.lat, l...)
	}
	t.stop()
	return t, nil
}

// w2CheckAcked reads every document back and checks that it is there with
// the version its last set was acknowledged with: no acknowledged set may
// be lost.
func w2CheckAcked(ctx context.Context, c *satchel.Collection, acked []int64) error {
	lost := 0
	var first error
	for i, v := range acked {
		d, err := c.Get(ctx, W2Key(i), false)
		if err != nil && !errors.Is(err, satchel.ErrNotFound) {
			return fmt.Errorf("bench W2 check %d: %w", i, err)
		}
		if d.Version != v {
			lost++
			if first == nil {
				first = mismatch("W2", "check", "document %d: version %d, its last set was acknowledged with %d", i, d.Version, v)
			}
		}
	}
	if lost > 0 {
		return fmt.Errorf("%w (%d of %d acknowledged sets lost)", first, lost, len(acked))
	}
	return nil
}

func keys(ds []satchel.Document) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Key
	}
	return out
}

// sameDoc compares a stored document with the generated one, datetimes as
// instants (the store normalizes them) and numbers as values.
func sameDoc(d satchel.Document, want map[string]any) bool {
	var got map[string]any
	if err := json.Unmarshal(d.JSON, &got); err != nil {
		return false
	}
	w := make(map[string]any, len(want))
	for k, v := range want {
		w[k] = v
	}
	if g, ok := got["updated_at"].(string); ok {
		got["updated_at"] = normTime(g)
	}
	w["updated_at"] = normTime(w["updated_at"].(string))
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

func normTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(time.RFC3339Nano)
}
