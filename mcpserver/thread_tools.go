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
	ts, err := c.s.cfg.Store.Threads(ctx, c.se.id.Scope)
	if err != nil {
		return nil, err
	}
	current := c.se.id.Thread
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
