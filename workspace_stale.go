package satchel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
)

// TrackReads gives the workspace a read ledger: for every path, the
// content it last saw, by reading any part of the file (Read,
// ReadNumbered, ReadWith) or by changing it. A write over an existing
// file, a StrReplace, a Delete and a Move (its source, and a destination
// that exists) are then refused with a *StaleError (ErrStale) when the
// file's content at the head is not what the ledger holds, or when the
// ledger holds nothing for it. New files and appends are never refused,
// and the workspace's own changes update the ledger. The check runs when
// the mutation applies, against the state it applies to, inside the
// commit's compare-and-swap: of two writers with the same stale view, at
// most one passes it.
//
// The ledger holds a content hash per path, never the content. Handles
// made from the workspace (As, OnThread, the arms of a Fanout) share it.
func TrackReads() WorkspaceOption {
	return func(w *Workspace) { w.reads = &readLedger{seen: map[ledgerKey]*seenFile{}} }
}

// WarnStale makes a mutation of a workspace that tracks reads apply even
// when it is stale: each stale path is reported to warn, with the error
// that would have refused it, after the mutation committed.
func WarnStale(warn func(err error)) WriteOption {
	return func(o *writeOpts) { o.warnStale = warn }
}

// StaleError is the refusal of a change to a file that changed since the
// caller last saw it (or that it never saw). It matches ErrStale.
type StaleError struct {
	// Path is the file.
	Path string
	// NotRead is set when the caller never saw the file; the fields below
	// are then zero.
	NotRead bool
	// Commit is the newest commit that changed the file, Agent who made it
	// ("" for an operator), Tool through what (the commit's Via without an
	// "mcp:" prefix, e.g. "edit_file", "lua:summarize.lua", "cli:fs
	// write"), and Time when.
	Commit int64
	Agent  string
	Tool   string
	Time   time.Time
}

func (e *StaleError) Error() string {
	if e.NotRead {
		return fmt.Sprintf("%s exists and you have not read it; read it before changing it", e.Path)
	}
	by := "an operator"
	if e.Agent != "" {
		by = "agent " + e.Agent
	}
	return fmt.Sprintf("%s changed since you last read it: commit %d by %s (%s, %s); read it again before changing it",
		e.Path, e.Commit, by, e.Tool, e.Time.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrStale) hold.
func (e *StaleError) Is(target error) bool { return target == errs.ErrStale }

// readLedger is what one caller last saw of each file, per thread.
type readLedger struct {
	mu   sync.Mutex
	seen map[ledgerKey]*seenFile
}

type ledgerKey struct{ thread, path string }

// seenFile is one file as the caller last saw it.
type seenFile struct {
	sum contentSum
	// state, when not nil, is the hash's state after the content, from
	// which an append's text extends it without reading the file again.
	// Only appends keep it: a read or a write hashes in one call, which
	// costs less.
	state []byte
	// layout fingerprints the entry's chunks when known (0: unknown).
	// Chunks are immutable, so an entry with the same chunks has the same
	// content, and the check then reads nothing.
	layout uint64
}

// hashed returns what the ledger keeps of content.
func hashed(content string, layout uint64) *seenFile {
	return &seenFile{sum: sumOf(content), layout: layout}
}

// contentSum identifies a file's content in the ledger: its length and
// its 64-bit xxHash (decision 0112). The ledger only compares the content
// a caller saw with the content at the head, within one process: a hash
// at many gigabytes a second serves, where SHA-256 was a third of a
// tracked write's time. Two different contents of one length agreeing
// by chance is a chance in 2^64; contents made to agree on purpose only
// let their maker's own change be overwritten.
type contentSum struct {
	n int64
	h uint64
}

// sumOf is what the ledger keeps of s.
func sumOf(s string) contentSum { return contentSum{int64(len(s)), xxhash.Sum64String(s)} }

// hashedForAppend is hashed keeping the hash's state, for an append.
func hashedForAppend(content string) *seenFile {
	h := xxhash.New()
	_, _ = h.WriteString(content)
	return sealed(h, int64(len(content)))
}

func sealed(h *xxhash.Digest, n int64) *seenFile {
	f := &seenFile{sum: contentSum{n, h.Sum64()}}
	f.state, _ = h.MarshalBinary()
	return f
}

// extended returns f followed by text (an append), or nil when f's state
// cannot be read back.
func (f *seenFile) extended(text string) *seenFile {
	h := xxhash.New()
	if err := h.UnmarshalBinary(f.state); err != nil {
		return nil
	}
	_, _ = h.WriteString(text)
	return sealed(h, f.sum.n+int64(len(text)))
}

// layoutOf fingerprints ent's chunks; 0 when they are not known yet (a
// file written in the transaction at hand).
func layoutOf(ent *engine.Entry) uint64 {
	if ent.Chunks == nil && ent.List.IsZero() {
		return 0
	}
	const prime = 1099511628211
	x := uint64(14695981039346656037)
	mix := func(v uint64) { x = (x ^ v) * prime }
	mix(uint64(ent.Size))
	mix(uint64(ent.List.Pack))
	mix(uint64(ent.List.Idx))
	for _, c := range ent.Chunks {
		mix(uint64(c.Ref.Pack))
		mix(uint64(c.Ref.Idx))
		mix(uint64(c.Len))
	}
	if x == 0 {
		x = 1
	}
	return x
}

func (l *readLedger) get(thread, path string) *seenFile {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[ledgerKey{thread, path}]
}

func (l *readLedger) put(thread, path string, f *seenFile) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f == nil {
		delete(l.seen, ledgerKey{thread, path})
		return
	}
	l.seen[ledgerKey{thread, path}] = f
}

// learnLayout records that the file f describes has the chunks layout.
func (l *readLedger) learnLayout(f *seenFile, layout uint64) {
	if layout == 0 {
		return
	}
	l.mu.Lock()
	f.layout = layout
	l.mu.Unlock()
}

// seen returns what a read of path reports to the ledger (nil when the
// workspace tracks no reads).
func (w *Workspace) seen(path string) func(*engine.Entry, string) {
	if w.reads == nil {
		return nil
	}
	return func(ent *engine.Entry, content string) {
		w.reads.put(w.ledgerThread(), path, hashed(content, layoutOf(ent)))
	}
}

// ledgerOp is a change of the caller's own that the ledger learns once
// its commit is made.
type ledgerOp struct {
	path string
	seen *seenFile // nil: forget the path
}

// staleFail is a stale check's refusal inside a transaction; the commit
// that changed the file is looked up once the transaction has ended.
type staleFail struct {
	path    string
	notRead bool
}

func (e *staleFail) Error() string { return "stale: " + e.path }

// checkSeen refuses a change to the file at path (ent, at the state the
// batch applies to) when the caller's ledger does not hold its content.
// content is the file's content when the caller has it already ("" and
// has false otherwise).
func (b *Batch) checkSeen(ctx context.Context, path string, ent *engine.Entry, content string, has bool) error {
	l := b.w.reads
	if l == nil {
		return nil
	}
	if b.own[path] {
		return nil // changed by this batch already
	}
	f := l.get(b.w.ledgerThread(), path)
	if f != nil {
		layout := layoutOf(ent)
		l.mu.Lock()
		same := layout != 0 && f.layout == layout
		l.mu.Unlock()
		if same {
			return nil
		}
		if !has {
			var err error
			if content, err = b.tx.Content(ctx, ent); err != nil {
				return err
			}
		}
		if sumOf(content) == f.sum {
			l.learnLayout(f, layout)
			return nil
		}
	}
	fail := &staleFail{path: path, notRead: f == nil}
	if b.warnStale != nil {
		b.staleWarned = append(b.staleWarned, fail)
		return nil
	}
	return fail
}

// learn records a change of the batch's own to path: seen is what the file
// holds after it (nil: it is gone).
func (b *Batch) learn(path string, seen *seenFile) {
	if b.w.reads == nil {
		return
	}
	if b.own == nil {
		b.own = map[string]bool{}
	}
	b.own[path] = true
	b.learned = append(b.learned, ledgerOp{path, seen})
}

// learnAppend records an append of text to path, whose entry before it
// was ent (nil: the append made the file). The ledger learns the new
// content only when it held the old one: an append to a file the caller
// never saw, or saw before others changed it, leaves what it holds.
func (b *Batch) learnAppend(ctx context.Context, path string, ent *engine.Entry, text string) error {
	l := b.w.reads
	if l == nil {
		return nil
	}
	if ent == nil {
		b.learn(path, hashedForAppend(text))
		return nil
	}
	var content string
	has := false
	var f *seenFile
	for i := len(b.learned) - 1; i >= 0; i-- {
		if b.learned[i].path == path {
			f = b.learned[i].seen
			break
		}
	}
	if f == nil && !b.own[path] {
		f = l.get(b.w.ledgerThread(), path)
		if f == nil {
			return nil
		}
		l.mu.Lock()
		same := f.layout != 0 && f.layout == layoutOf(ent)
		l.mu.Unlock()
		if !same {
			var err error
			if content, err = b.tx.Content(ctx, ent); err != nil {
				return err
			}
			has = true
			if sumOf(content) != f.sum {
				return nil
			}
		}
	}
	if f == nil {
		return nil
	}
	if f.state == nil {
		// No state to extend: hash the old content again.
		if !has {
			var err error
			if content, err = b.tx.Content(ctx, ent); err != nil {
				return err
			}
		}
		f = hashedForAppend(content)
	}
	if g := f.extended(text); g != nil {
		b.learn(path, g)
	}
	return nil
}

// settle tells the ledger what a committed batch changed, and reports
// the stale paths a WarnStale batch changed anyway.
func (b *Batch) settle(ctx context.Context) {
	if l := b.w.reads; l != nil {
		for _, op := range b.learned {
			l.put(b.w.ledgerThread(), op.path, op.seen)
		}
	}
	for _, f := range b.staleWarned {
		b.warnStale(b.w.staleError(ctx, f))
	}
}

// staleError words a stale check's refusal, naming the newest commit that
// changed the file.
func (w *Workspace) staleError(ctx context.Context, f *staleFail) error {
	e := &StaleError{Path: f.path, NotRead: f.notRead}
	if f.notRead {
		return e
	}
	page, err := w.FileHistory(ctx, f.path, 0, 1)
	if err != nil {
		return err
	}
	if len(page.Changes) > 0 {
		c := page.Changes[0].Commit
		e.Commit, e.Agent, e.Time = c.Seq, c.Agent, c.Time
		e.Tool = strings.TrimPrefix(c.Via, "mcp:")
		if e.Tool == "" {
			e.Tool = c.Op
		}
	}
	return e
}

// asStale turns a transaction's staleFail into the StaleError it means.
func (w *Workspace) asStale(ctx context.Context, err error) error {
	var f *staleFail
	if errors.As(err, &f) {
		return w.staleError(ctx, f)
	}
	return err
}

// hashed is the package's hashed when the workspace tracks reads (nil
// otherwise, and nothing is hashed).
func (b *Batch) hashed(content string) *seenFile {
	if b.w.reads == nil {
		return nil
	}
	return hashed(content, 0)
}

// seenOf returns what the caller's ledger holds of path, counting the
// batch's own changes (nil: nothing).
func (b *Batch) seenOf(path string) *seenFile {
	if b.w.reads == nil {
		return nil
	}
	for i := len(b.learned) - 1; i >= 0; i-- {
		if b.learned[i].path == path {
			return b.learned[i].seen
		}
	}
	f := b.w.reads.get(b.w.ledgerThread(), path)
	if f == nil {
		return nil
	}
	b.w.reads.mu.Lock()
	defer b.w.reads.mu.Unlock()
	g := *f
	return &g
}

// ledgerThread is the thread the read ledger files w's reads under: the
// caller's thread, also when a review routes them to a review thread
// forked from it (ForReview).
func (w *Workspace) ledgerThread() string {
	if w.home != "" {
		return w.home
	}
	return w.thread
}
