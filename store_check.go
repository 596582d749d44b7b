package satchel

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
)

// Fault is one problem Check found in storage.
type Fault struct {
	Scope  string `json:"scope"`
	Thread string `json:"thread"`
	// Seq is the commit the fault is in, 0 for the thread as a whole.
	Seq int64 `json:"seq,omitempty"`
	// Object names what is wrong: "head", "checkpoint NAME", "root",
	// "node PACK.INDEX", "file PATH, chunk PACK.INDEX", "commit ID", ...
	Object  string `json:"object"`
	Problem string `json:"problem"`
}

// String is "scope/thread@seq: object: problem".
func (f Fault) String() string {
	at := ""
	if f.Seq > 0 {
		at = fmt.Sprintf("@%d", f.Seq)
	}
	return fmt.Sprintf("%s/%s%s: %s: %s", f.Scope, f.Thread, at, f.Object, f.Problem)
}

// CheckReport is what Check read and found.
type CheckReport struct {
	Threads int     `json:"threads"`
	Commits int     `json:"commits"` // retained commits whose trees were read
	Objects int     `json:"objects"` // distinct nodes, chunk lists and chunks read
	Faults  []Fault `json:"faults"`
}

// CheckOption configures Check.
type CheckOption func(*checkOpts)

type checkOpts struct{ scope string }

// InScope limits Check to one scope (by default it checks them all).
func InScope(scope string) CheckOption { return func(o *checkOpts) { o.scope = scope } }

// Check verifies every retained commit of every thread: each node, chunk
// list and chunk it reaches exists and decodes, each subtree's file and
// byte totals match what is below it, and each file's chunks are as long
// as the file; each checkpoint names a retained commit; each thread's head
// is its newest retained commit; and the commits a collection would keep
// are exactly those the threads' logs reach (a commit outside every log
// is unreachable; a logged commit the collector does not see would lose
// its storage). It reads from storage, not from this Store's caches.
//
// Every fault is reported, with its thread, commit and object; the error
// is a failure to read at all (a closed store, a cancelled context).
// Check is safe while writers run: a thread's log and head, and the
// collector's view, are read again when a commit made during the check
// makes them disagree. A check of a quiet store is the one to trust.
func (s *Store) Check(ctx context.Context, opts ...CheckOption) (CheckReport, error) {
	var o checkOpts
	for _, opt := range opts {
		opt(&o)
	}
	var rep CheckReport
	scopes := []string{o.scope}
	if o.scope == "" {
		var err error
		if scopes, err = s.b.Scopes(ctx); err != nil {
			return rep, err
		}
	}
	k := engine.NewChecker(engine.New(s.b, engine.Options{CacheBytes: 16 << 20}))
	for _, sc := range scopes {
		if err := s.checkScope(ctx, k, sc, &rep); err != nil {
			return rep, err
		}
		if err := s.checkQuota(ctx, sc, &rep); err != nil {
			return rep, err
		}
	}
	rep.Objects = k.Objects()
	sort.SliceStable(rep.Faults, func(i, j int) bool {
		a, b := rep.Faults[i], rep.Faults[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.Thread != b.Thread {
			return a.Thread < b.Thread
		}
		return a.Seq < b.Seq
	})
	return rep, nil
}

func (s *Store) checkScope(ctx context.Context, k *engine.Checker, scope string, rep *CheckReport) error {
	threads, err := s.b.Threads(ctx, scope)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	logged := map[int64]backend.Commit{} // by commit ID
	for _, t := range threads {
		rep.Threads++
		names[t.ID] = t.Name
		add := func(seq int64, obj, problem string, args ...any) {
			rep.Faults = append(rep.Faults, Fault{Scope: scope, Thread: t.Name, Seq: seq, Object: obj, Problem: fmt.Sprintf(problem, args...)})
		}
		// The log and the head are read again when they disagree: a commit
		// that lands between the two reads (a writer, or a killed client's
		// last transaction committing on a server) is no fault.
		var (
			log  []backend.Commit
			head backend.Commit
			ok   bool
			err  error
		)
		for range 3 {
			if log, err = s.eng.Log(ctx, t.ID, 0, 0); err != nil {
				return err
			}
			if head, ok, err = s.eng.HeadCommit(ctx, t.ID); err != nil {
				return err
			}
			if ok == (len(log) > 0) && (!ok || head.Seq == log[0].Seq && head.ID == log[0].ID) {
				break
			}
		}
		retained := map[int64]bool{}
		for i, c := range log {
			retained[c.Seq] = true
			logged[c.ID] = c
			if i > 0 && (c.Seq >= log[i-1].Seq || c.ID >= log[i-1].ID) {
				add(c.Seq, fmt.Sprintf("commit %d", c.ID), "is listed after commit %d (seq %d), which is not older", log[i-1].ID, log[i-1].Seq)
			}
		}
		switch {
		case !ok && len(log) > 0:
			add(0, "head", "missing, but commit %d is retained", log[0].Seq)
		case ok && len(log) == 0:
			add(0, "head", "is commit %d, but no commit is retained", head.Seq)
		case ok && (head.Seq != log[0].Seq || head.ID != log[0].ID):
			add(0, "head", "is commit %d, but the newest retained commit is %d", head.Seq, log[0].Seq)
		}
		cps, err := s.eng.Checkpoints(ctx, t.ID)
		if err != nil {
			return err
		}
		for _, cp := range cps {
			if !retained[cp.Seq] {
				add(0, "checkpoint "+cp.Name, "names commit %d, which is not retained", cp.Seq)
			}
		}
		for _, c := range log {
			rep.Commits++
			faults, err := k.Commit(ctx, c)
			if err != nil {
				return fmt.Errorf("checking commit %d of %s/%s: %w", c.Seq, scope, t.Name, err)
			}
			for _, f := range faults {
				add(c.Seq, f.Object, "%s", f.Problem)
			}
		}
	}
	// What a collection keeps against what the logs reach.
	gs, err := s.b.GCSnapshot(ctx, scope, time.Time{})
	if err != nil {
		return err
	}
	kept := map[int64]bool{}
	var unlogged []backend.Commit
	for _, c := range gs.Retained {
		kept[c.ID] = true
		if _, ok := logged[c.ID]; !ok {
			unlogged = append(unlogged, c)
		}
	}
	// A commit that landed after its thread's log was read (writers may
	// run during a check, and a killed client's last transaction may still
	// commit on a server) is in the logs when they are read again.
	if len(unlogged) > 0 {
		if unlogged, err = s.stillUnlogged(ctx, scope, unlogged); err != nil {
			return err
		}
	}
	for _, c := range unlogged {
		name, ok := names[c.Thread]
		if !ok {
			name = fmt.Sprintf("#%d", c.Thread)
		}
		rep.Faults = append(rep.Faults, Fault{Scope: scope, Thread: name, Seq: c.Seq,
			Object: fmt.Sprintf("commit %d", c.ID), Problem: "is retained, but no thread's log reaches it"})
	}
	for id, c := range logged {
		if !kept[id] {
			rep.Faults = append(rep.Faults, Fault{Scope: scope, Thread: names[c.Thread], Seq: c.Seq,
				Object: fmt.Sprintf("commit %d", id), Problem: "is in the log, but a collection would not keep what it reaches"})
		}
	}
	return nil
}

// stillUnlogged returns the commits of cs that no thread's log of scope
// reaches now, reading the logs again.
func (s *Store) stillUnlogged(ctx context.Context, scope string, cs []backend.Commit) ([]backend.Commit, error) {
	threads, err := s.b.Threads(ctx, scope)
	if err != nil {
		return nil, err
	}
	logged := map[int64]bool{}
	for _, t := range threads {
		log, err := s.eng.Log(ctx, t.ID, 0, 0)
		if err != nil {
			return nil, err
		}
		for _, c := range log {
			logged[c.ID] = true
		}
	}
	var out []backend.Commit
	for _, c := range cs {
		if !logged[c.ID] {
			out = append(out, c)
		}
	}
	return out, nil
}

// checkQuota compares the usage counters kept for a scope with a quota
// with a count of what it stores, both read in one snapshot: a counter
// that disagrees is a fault.
func (s *Store) checkQuota(ctx context.Context, scope string, rep *CheckReport) error {
	if qs, err := s.b.Quotas(ctx, scope); err != nil || len(qs) == 0 {
		return err
	}
	counted, row, err := s.b.CountUsage(ctx, scope, s.eng.Live)
	if err != nil && ctx.Err() == nil {
		// A head that cannot be read is a fault the thread checks report;
		// the counters cannot be compared then.
		rep.Faults = append(rep.Faults, Fault{Scope: scope, Object: "quota usage", Problem: "could not be counted: " + err.Error()})
		return nil
	}
	if err != nil || row == nil {
		return err
	}
	kept, got := row.Used.Fields(), counted.Fields()
	for i, name := range backend.Counters {
		if *kept[i] == *got[i] {
			continue
		}
		rep.Faults = append(rep.Faults, Fault{Scope: scope, Object: "quota usage",
			Problem: fmt.Sprintf("the %s counter is %d, storage holds %d", name, *kept[i], *got[i])})
	}
	return nil
}
