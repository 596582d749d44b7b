package satchel

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/udiff"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// MaxBlameScan bounds the commits one Blame call examines, and
// MaxBlameBytes the content it reads: past either, the lines not yet
// explained are given to the oldest commit examined, marked Before.
const (
	MaxBlameScan  = 20000
	MaxBlameBytes = 256 << 20
)

// BlameLine is one line of a file and the commit that last changed it.
type BlameLine struct {
	// Line is the line's number (from 1) at the commit blamed at.
	Line int `json:"line"`
	// Text is the line, without its "\n".
	Text string `json:"text"`
	// Thread is the thread of Commit: the source thread of a fork for a
	// line the fork inherited.
	Thread string `json:"thread"`
	// Commit is the commit that wrote the line as it is.
	Commit Commit `json:"commit"`
	// Before is set when the walk stopped before the line's origin
	// (retention dropped the older commits, the fork's source is out of
	// reach, or MaxBlameScan was reached): the line was already there at
	// Commit, which may not have written it.
	Before bool `json:"before,omitempty"`
}

// Blame tells, for each line of the file at path at the commit at (a
// sequence number, a checkpoint name, "" or "head"), the commit that last
// changed it, walking the thread's retained commits back from at and,
// from a fork's first commit, on into the commit of the source thread it
// was forked from (not for a workspace confined by OnlyThread). A merge
// commit is walked through its first parent: the lines it brought in are
// its own. Bounds, as Read's, give the lines wanted (the others cost
// nothing once their walk is done). Binary content is refused. For a
// caller whose file rules hide paths, a hidden path is not found, and each
// commit's summary is redacted as History redacts it.
func (w *Workspace) Blame(ctx context.Context, path, at string, bounds ...int) ([]BlameLine, error) {
	if err := vpath.Validate(path); err != nil {
		return nil, err
	}
	if w.gate != nil && w.gate.access(path) == AccessNone {
		w.refused("blame", path, refusedHidden)
		return nil, errs.New(errs.ErrNotFound, "file not found: %s", path)
	}
	start, end := 1, 0
	switch len(bounds) {
	case 0:
	case 1:
		start = bounds[0]
	case 2:
		start, end = bounds[0], bounds[1]
	default:
		return nil, errs.New(errs.ErrInvalidRange, "blame takes at most two bounds (start, end), got %d", len(bounds))
	}
	if start < 1 || end < 0 || (end != 0 && end < start) {
		return nil, errs.New(errs.ErrInvalidRange, "invalid blame range %d to %d: lines are numbered from 1 and the end is not before the start (0: to the last line)", start, end)
	}
	if strings.IndexByte(at, '@') >= 0 {
		return nil, errs.New(errs.ErrInvalidArgument, "blame at %q: name a commit of thread %s (a sequence number, a checkpoint name or head)", at, w.thread)
	}
	c, err := w.resolveLocal(ctx, at)
	if err != nil {
		return nil, err
	}
	if c.Seq == 0 {
		return nil, errs.New(errs.ErrNotFound, "file not found: %s", path)
	}
	ent, ok, err := w.entryAt(ctx, c, path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.New(errs.ErrNotFound, "file not found: %s", path)
	}
	cur, err := w.s.eng.Content(ctx, &ent)
	if err != nil {
		return nil, err
	}
	if IsBinary(cur) {
		return nil, errs.New(errs.ErrInvalidArgument, "cannot blame %s: its content is binary", path)
	}
	texts := splitLines(cur)
	if end == 0 || end > len(texts) {
		end = len(texts)
	}
	out := []BlameLine{}
	// tracked are the lines still to explain, in order: each one's index
	// in the current commit's content and in out.
	type trk struct{ line, out int }
	var tracked []trk
	for i := start - 1; i < end; i++ {
		tracked = append(tracked, trk{i, len(out)})
		out = append(out, BlameLine{Line: i + 1, Text: strings.TrimSuffix(texts[i], "\n")})
	}
	texts = nil
	b := blamer{w: w, tw: w}
	if b.id, _, err = w.threadID(ctx, false); err != nil {
		return nil, err
	}
	// commitOf is the commit as the caller may see it.
	commitOf := func(c backend.Commit) Commit {
		cm, _ := w.redactOf(c, nil)
		return cm
	}
	giveAll := func(c backend.Commit, thread string, before bool) {
		cm := commitOf(c)
		for _, t := range tracked {
			out[t.out].Thread, out[t.out].Commit, out[t.out].Before = thread, cm, before
		}
		tracked = nil
	}
	read := int64(len(cur))
	for scanned := 0; len(tracked) > 0; scanned++ {
		ct := b.tw.thread // c's thread (prev may move the walk to a fork's source)
		if scanned == MaxBlameScan || read > MaxBlameBytes {
			giveAll(c, ct, true)
			break
		}
		p, found, cut, err := b.prev(ctx, c)
		if err != nil {
			return nil, err
		}
		if !found {
			giveAll(c, ct, cut)
			break
		}
		if !mayTouch(c.Meta, path) {
			c = p // the file is as it was: nothing to read
			continue
		}
		pent, ok, err := w.entryAt(ctx, p, path)
		if err != nil {
			return nil, err
		}
		if !ok {
			giveAll(c, ct, false)
			break
		}
		if same, err := w.s.eng.SameContent(ctx, &ent, &pent); err != nil {
			return nil, err
		} else if same {
			c = p
			continue
		}
		prev, err := w.s.eng.Content(ctx, &pent)
		if err != nil {
			return nil, err
		}
		read += int64(len(prev))
		// A line of cur inside a changed block is c's; any other is a line
		// of prev, shifted by the blocks before it.
		blocks := udiff.Blocks(prev, cur)
		cm := commitOf(c)
		kept := tracked[:0]
		shift, bi := 0, 0
		for _, t := range tracked {
			for bi < len(blocks) && blocks[bi].B1 <= t.line {
				shift += (blocks[bi].A1 - blocks[bi].A0) - (blocks[bi].B1 - blocks[bi].B0)
				bi++
			}
			if bi < len(blocks) && t.line >= blocks[bi].B0 && t.line < blocks[bi].B1 {
				out[t.out].Thread, out[t.out].Commit = ct, cm
				continue
			}
			kept = append(kept, trk{t.line + shift, t.out})
		}
		tracked, cur, ent, c = kept, prev, pent, p
	}
	return out, nil
}

// blamer walks a file's commits back, across a fork into its source.
type blamer struct {
	w, tw *Workspace       // the workspace blamed, and the thread walked now
	id    int64            // tw's thread ID
	older []backend.Commit // tw's commits older than the current, newest first
}

// prev returns the commit before c: the retained commit before it in its
// thread, or for a fork's first commit the commit forked from. found is
// false when there is none; cut then says whether older commits were lost
// (retention) or are out of reach.
func (b *blamer) prev(ctx context.Context, c backend.Commit) (p backend.Commit, found, cut bool, err error) {
	if len(b.older) == 0 || b.older[0].Seq >= c.Seq {
		if b.older, err = b.w.s.eng.Log(ctx, b.id, c.Seq, 500); err != nil {
			return p, false, false, err
		}
	}
	if len(b.older) > 0 {
		p, b.older = b.older[0], b.older[1:]
		return p, true, false, nil
	}
	if c.Seq != 1 {
		return p, false, true, nil // retention dropped the commits before c
	}
	o, ok := parseOrigin(b.w.s.commitOf(c, nil))
	if !ok {
		return p, false, false, nil // the thread's first commit: it added the file
	}
	if b.w.only && o.Thread != b.w.thread {
		return p, false, true, nil
	}
	src := b.w.sibling(o.Thread)
	id, exists, err := src.threadID(ctx, false)
	if err != nil || !exists {
		return p, false, true, err
	}
	sc, err := b.w.s.eng.CommitAt(ctx, id, o.Seq)
	if err != nil {
		return p, false, true, nil // dropped by the source's retention
	}
	b.tw, b.id, b.older = src, id, nil
	return sc, true, false, nil
}

// entryAt returns the file at path in commit c.
func (w *Workspace) entryAt(ctx context.Context, c backend.Commit, path string) (engine.Entry, bool, error) {
	snap, err := w.s.eng.At(ctx, c)
	if err != nil {
		return engine.Entry{}, false, err
	}
	return snap.Get(ctx, path)
}

// splitLines splits content into its lines, each with its "\n" (a last
// line without one is a line too).
func splitLines(content string) []string {
	out := make([]string, 0, strings.Count(content, "\n")+1)
	for l := range strings.Lines(content) {
		out = append(out, l)
	}
	return out
}

// mayTouch reports whether the commit of meta may have changed path: not
// when it is a write, append, edit, delete, move or batch whose summary
// is whole (not cut), lists its operations (a batch's only when the store
// wrote it, commitMeta.Own: not Batch.Summarize's text, which may read as
// a list) and names neither path nor a directory above it.
// A summary names each path after a space and before its end, "; " or
// " -> ", so a path it names is found as such.
func mayTouch(meta []byte, path string) bool {
	if plainPath(path) && !bytes.Contains(meta, []byte("\u2026")) && !bytes.Contains(meta, []byte("…")) {
		// The metadata is JSON whose op comes first, and a plain path is
		// written as it is: when neither the path nor a directory above
		// it is in the bytes, the summary cannot name them.
		for _, op := range []string{"write", "append", "edit", "delete", "move"} {
			if bytes.HasPrefix(meta, []byte(`{"op":"`+op+`"`)) {
				found := false
				for q := path; !found; {
					found = bytes.Contains(meta, []byte(q))
					i := strings.LastIndexByte(q, '/')
					if i < 0 {
						break
					}
					q = q[:i]
				}
				if !found {
					return false
				}
				break
			}
		}
	}
	var m commitMeta
	if json.Unmarshal(meta, &m) != nil {
		return true
	}
	switch m.Op {
	case "write", "append", "edit", "delete", "move", "batch":
	default:
		return true
	}
	if strings.HasSuffix(m.Summary, "…") {
		return true
	}
	if m.Op == "batch" {
		if !m.Own {
			return true // Summarize's text or a git subject, not the store's list
		}
		for p := range strings.SplitSeq(m.Summary, "; ") {
			if _, _, _, ok := parseNote(p); !ok {
				return true // a note that does not read as one (" -> " in a path)
			}
		}
	}
	for q := path; ; {
		if namedIn(m.Summary, q) {
			return true
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 {
			return false
		}
		q = q[:i]
	}
}

// namedIn reports whether s holds q after a space and before its end, a
// space or a ';'.
func namedIn(s, q string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], q)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(q)
		if at > 0 && s[at-1] == ' ' && (end == len(s) || s[end] == ' ' || s[end] == ';') {
			return true
		}
		i = at + 1
	}
}

// plainPath reports whether JSON writes p as it is: printable ASCII with
// no quote, backslash or character an encoder may escape.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
