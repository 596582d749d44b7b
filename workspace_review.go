package satchel

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/satchel-dev/satchel/internal/errs"
)

// ForReview makes every change of the workspace wait for review (decision
// 0121): the workspace never changes its thread. Its first change forks
// a review thread ("review-R-XXXXXXXX") from the thread's head and records
// a Review; that change and every later one go to the review thread, and
// the workspace's reads read it, so the caller sees its own changes. An
// operator approves the review (Store.ApproveReview merges it into the
// thread) or rejects it (Store.RejectReview); either way the review
// thread is archived, the caller's next call is told (Notices), and its
// next change starts a new review.
//
// key names the caller: an MCP session, a Lua run. Workspaces opened with
// the same key on the same scope and thread share one open review, in
// any process (a session served by several replicas keeps its review);
// with an empty key, the review is this workspace's and its handles'
// only.
// The handles made from the workspace (ForActor, OnThread, the arms of a
// Fanout) share its routing; OnThread routes the other thread's changes
// to a review of their own.
//
// Merge, PublishTo and SetRetention change a thread directly: a workspace
// under review refuses them. Spills are not the thread's files: they go
// to the thread's spill area as for any caller.
func ForReview(key string) WorkspaceOption {
	return func(w *Workspace) {
		w.rv = &reviewer{key: key, routes: map[string]*reviewRoute{}}
	}
}

// UnderReview reports whether the workspace's changes wait for review
// (ForReview).
func (w *Workspace) UnderReview() bool { return w.rv != nil }

// Notices returns, and forgets, what the workspace's calls through this
// handle have to tell their caller: that its changes wait for review
// (`your changes wait for review R-XXXXXXXX`), once per handle, and that a
// review of its changes was approved or rejected, once per review. A
// server takes a handle per call (ForActor) and adds the handle's notices
// to the call's result.
func (w *Workspace) Notices() []string {
	if w.notes == nil {
		return nil
	}
	w.notes.mu.Lock()
	defer w.notes.mu.Unlock()
	out := w.notes.list
	w.notes.list = nil
	return out
}

// noteSink holds a handle's notices.
type noteSink struct {
	mu   sync.Mutex
	list []string
}

func (w *Workspace) notify(s string) {
	n := w.notes
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range n.list {
		if x == s {
			return
		}
	}
	n.list = append(n.list, s)
}

// unnotify takes back a notice of the handle's.
func (w *Workspace) unnotify(s string) {
	n := w.notes
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, x := range n.list {
		if x == s {
			n.list = append(n.list[:i], n.list[i+1:]...)
			return
		}
	}
}

// reviewer is the review routing of a workspace opened with ForReview,
// shared by its handles: per thread, the open review, if any.
type reviewer struct {
	key    string
	mu     sync.Mutex
	routes map[string]*reviewRoute // by thread; nil value: looked up, none
}

type reviewRoute struct {
	rev Review
	ws  *Workspace // the review thread's workspace (its id and bounds)
}

// refuseUnderReview refuses what would change a thread directly.
func (w *Workspace) refuseUnderReview(what string) error {
	return errs.New(errs.ErrAccessDenied, "your changes wait for review: %s is for an operator (satchel review approve merges a review)", what)
}

// route returns the workspace a call of w's acts on: w's thread without
// an open review (for a read; a change opens one), else the review
// thread. With check, a review decided since the last call (its thread
// archived) is told (Notices) and forgotten first; a change skips that
// read of the review thread's head, since its commit is refused on an
// archived thread anyway (see reviewed).
func (w *Workspace) route(ctx context.Context, change, check bool) (*Workspace, error) {
	rv := w.rv
	rv.mu.Lock()
	defer rv.mu.Unlock()
	r, known := rv.routes[w.thread]
	if !known {
		var err error
		if r, err = w.findReview(ctx); err != nil {
			return nil, err
		}
		rv.routes[w.thread] = r
	}
	if r != nil && check {
		archived, err := r.ws.Archived(ctx)
		if err != nil {
			return nil, err
		}
		if archived {
			if r, err = w.forgetDecided(ctx, r); err != nil {
				return nil, err
			}
		}
	}
	if r == nil && !change {
		return w.unrouted(), nil
	}
	if r == nil {
		var err error
		if r, err = w.startReview(ctx); err != nil {
			return nil, err
		}
		rv.routes[w.thread] = r
	}
	if change {
		w.notify(reviewWaits(r.rev.ID))
	}
	h := w.unrouted()
	h.thread, h.ref, h.limits, h.home = r.rev.ReviewThread, r.ws.ref, r.ws.limits, w.thread
	return h, nil
}

// forgetDecided forgets r, whose thread is archived, when its review was
// decided, telling the caller (rv.mu held); it returns the route left:
// nil, or r itself while the review is still open (an approval under way
// archives the thread before it merges).
func (w *Workspace) forgetDecided(ctx context.Context, r *reviewRoute) (*reviewRoute, error) {
	rec, err := w.s.review(ctx, r.rev.ID)
	if err != nil {
		return nil, err
	}
	if rec.State == ReviewOpen {
		return r, nil
	}
	w.unnotify(reviewWaits(rec.ID)) // a change that did not land there
	w.notify(decidedNotice(rec.Review.hideReason(w.ReadsEverything())))
	w.rv.routes[w.thread] = nil
	return nil, nil
}

// reviewed runs a change of w's on the workspace it goes to (route). When
// the review thread turns out to be archived, its review decided since
// the caller's last call, the caller is told and the change runs again,
// on a new review.
func reviewed[T any](ctx context.Context, w *Workspace, fn func(rw *Workspace) (T, error)) (T, error) {
	rw, err := w.route(ctx, true, false)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(rw)
	if !errors.Is(err, ErrArchived) {
		return v, err
	}
	rv := w.rv
	rv.mu.Lock()
	r := rv.routes[w.thread]
	again := false
	if r != nil && r.rev.ReviewThread == rw.thread {
		left, ferr := w.forgetDecided(ctx, r)
		if ferr != nil {
			rv.mu.Unlock()
			return v, ferr
		}
		again = left == nil
	}
	rv.mu.Unlock()
	if !again {
		if r != nil && r.rev.ReviewThread == rw.thread {
			// Archived, still open: an approval under way (it archives
			// first), or an operator's archive.
			return v, errs.New(errs.ErrConflict, "review %s is being decided (its thread is archived meanwhile): try again shortly", r.rev.ID)
		}
		return v, err
	}
	if rw, err = w.route(ctx, true, false); err != nil {
		var zero T
		return zero, err
	}
	return fn(rw)
}

// unrouted is a handle on w's own thread that routes nothing.
func (w *Workspace) unrouted() *Workspace {
	h := *w
	h.rv = nil
	return &h
}

// findReview looks up the open review of w's caller (its key) on w's
// thread.
func (w *Workspace) findReview(ctx context.Context) (*reviewRoute, error) {
	if w.rv.key == "" {
		return nil, nil
	}
	rs, err := w.s.reviews(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.State == ReviewOpen && r.Key == w.rv.key && r.Scope == w.scope && r.Thread == w.thread {
			rw, err := w.s.Workspace(ctx, r.Scope, r.ReviewThread)
			if err != nil {
				return nil, err
			}
			return &reviewRoute{rev: r.Review, ws: rw}, nil
		}
	}
	return nil, nil
}

// startReview forks a review thread from w's thread's head and records
// the review.
func (w *Workspace) startReview(ctx context.Context) (*reviewRoute, error) {
	base := w.unrouted()
	base.notes, base.only = nil, false // the fork is the review's, not a reach of the caller's
	if _, _, err := base.threadID(ctx, true); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		id, err := newReviewID()
		if err != nil {
			return nil, err
		}
		head, err := base.Head(ctx)
		if err != nil {
			return nil, err
		}
		name := reviewThreadPrefix + id
		from := "head"
		if head.Seq > 0 {
			from = strconv.FormatInt(head.Seq, 10)
		}
		rw, err := base.Fork(ctx, from, name)
		if errors.Is(err, ErrExists) && attempt < 3 {
			continue // an ID taken already: draw another
		}
		if err != nil {
			return nil, err
		}
		fork, err := rw.Head(ctx)
		if err != nil {
			return nil, err
		}
		now, err := w.s.b.Now(ctx)
		if err != nil {
			return nil, err
		}
		r := Review{ID: id, Scope: w.scope, Thread: w.thread, ReviewThread: name, Base: head.Seq, Fork: fork.Seq,
			Agent: w.actor.Agent, Token: w.actor.Credential, Created: now.UTC(), State: ReviewOpen}
		if err := w.s.putReview(ctx, reviewRecord{Review: r, Key: w.rv.key}); err != nil {
			return nil, err
		}
		return &reviewRoute{rev: r, ws: rw}, nil
	}
}

// reading routes a read: the workspace it reads.
func (w *Workspace) reading(ctx context.Context) (*Workspace, error) {
	return w.route(ctx, false, true)
}

// changing routes a change that is not run again (a fanout): the review
// thread's workspace, opened by the first change.
func (w *Workspace) changing(ctx context.Context) (*Workspace, error) {
	return w.route(ctx, true, true)
}
