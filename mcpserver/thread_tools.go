package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
)

// runListThreads lists the threads of the caller's scope, and only those:
// the scope comes from the session, never from an argument.
func runListThreads(ctx context.Context, c *call) (*outcome, error) {
	if err := c.a.err(); err != nil {
		return nil, err
	}
	id := c.se.identity()
	ts, err := c.s.cfg.Store.Threads(ctx, id.Scope)
	if err != nil {
		return nil, err
	}
	current := id.Thread
	if id.ThreadBound {
		// A thread-bound token sees its thread only.
		mine := ts[:0]
		for _, t := range ts {
			if t.Name == current {
				mine = append(mine, t)
			}
		}
		ts = mine
	}
	lines := make([]string, 0, len(ts)+1)
	seen := false
	for i := range ts {
		ts[i].Created, ts[i].HeadTime = ts[i].Created.UTC(), ts[i].HeadTime.UTC()
		when := "-"
		if !ts[i].HeadTime.IsZero() {
			when = ts[i].HeadTime.Format(time.RFC3339)
		}
		line := fmt.Sprintf("%s\t%d\t%s", ts[i].Name, ts[i].Head, when)
		if ts[i].Name == current {
			line += "\t(current)"
			seen = true
		}
		lines = append(lines, line)
	}
	if !seen {
		// The session's thread is made by its first write.
		lines = append(lines, current+"\t0\t-\t(current)")
	}
	return &outcome{text: strings.Join(lines, "\n"), structured: map[string]any{"threads": nonNil(ts), "current": current}, untrusted: true}, nil
}

// runFork forks the session's thread at a commit into a new thread of the
// same scope.
func runFork(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	name, _ := a.str("name", true)
	from, hasFrom := a.ref("from", false)
	if !hasFrom {
		from = "head"
	}
	if err := a.err(); err != nil {
		return nil, err
	}
	if err := satchel.ValidThreadName(name); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	// Resolve from once, so that the commit reported is the one forked
	// even when another writer moves the head meanwhile.
	snap, err := ws.At(ctx, from)
	if err != nil {
		return nil, err
	}
	seq := snap.Commit().Seq
	ref := from
	if seq > 0 {
		ref = strconv.FormatInt(seq, 10)
	}
	if _, err := ws.Fork(ctx, ref, name, c.keyOpts()...); err != nil {
		return nil, err
	}
	return &outcome{
		text:       fmt.Sprintf("forked thread %s from %s at %s (commit %d)", name, ws.Thread(), from, seq),
		structured: map[string]any{"thread": name, "from": from, "source": ws.Thread(), "seq": seq},
	}, nil
}

// runSwitchThread moves the session to another thread of its scope: the
// next calls read and change that thread. What the session read of each
// thread stays in its read ledger.
func runSwitchThread(ctx context.Context, c *call) (*outcome, error) {
	thread, _ := c.a.str("thread", true)
	if err := c.a.err(); err != nil {
		return nil, err
	}
	if c.se.perRequest {
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: fmt.Sprintf(
			"at protocol %s a request has no session to move: name the thread in each request (the %s header, or _meta %q)", newestVersion, ThreadHeader, MetaThread)}
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	from := ws.Thread()
	to, err := ws.OnThread(ctx, thread)
	if err != nil {
		return nil, err
	}
	head, err := to.Head(ctx)
	if err != nil {
		return nil, err
	}
	structured := map[string]any{"thread": thread, "previous": from, "head": head.Seq}
	if thread == from {
		return &outcome{text: "already on thread " + thread, structured: structured}, nil
	}
	if c.se.onSwitch != nil {
		if err := c.se.onSwitch(ctx, thread); err != nil {
			return nil, err
		}
	}
	c.se.switchTo(to)
	return &outcome{text: fmt.Sprintf("switched to thread %s (head: commit %d); was %s", thread, head.Seq, from), structured: structured}, nil
}

// runMerge merges a thread's changes into the session's thread, or into.
func runMerge(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	from, _ := a.str("from", true)
	into, hasInto := a.str("into", false)
	conflicts, hasConflicts := a.str("conflicts", false)
	dryRun := a.boolean("dry_run", false)
	if hasConflicts && conflicts != "refuse" && conflicts != "markers" {
		a.add(satchel.ErrInvalidArgument, "conflicts must be \"refuse\" or \"markers\", was %q", conflicts)
	}
	if err := a.err(); err != nil {
		return nil, err
	}
	var opts []satchel.MergeOption
	if conflicts == "markers" {
		opts = append(opts, satchel.ConflictMarkers())
	}
	if dryRun {
		opts = append(opts, satchel.DryRun())
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	if hasInto && into != ws.Thread() {
		if err := satchel.ValidThreadName(into); err != nil {
			return nil, err
		}
		if ws, err = ws.OnThread(ctx, into); err != nil {
			return nil, err
		}
	}
	r, err := ws.Merge(ctx, from, opts...)
	if err != nil {
		return nil, err
	}
	return &outcome{text: r.Message(), structured: r}, nil
}
