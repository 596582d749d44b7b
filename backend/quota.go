package backend

import (
	"context"

	"github.com/satchel-dev/satchel/internal/errs"
)

// ErrQuotaExceeded is matched (errors.Is) by every *QuotaError: a change
// refused because it would grow a scope's usage past its quota.
var ErrQuotaExceeded = errs.ErrQuotaExceeded

// Usage is what a scope holds, as its quotas count it: the live bytes and
// number of files of every thread's head (DESIGN §2.4 counts them), the
// number of threads and of documents, and the bytes of the packs the
// scope still stores (its history, retained or awaiting collection).
type Usage struct {
	Bytes        int64
	Files        int64
	Threads      int64
	Documents    int64
	HistoryBytes int64
}

// NoLimit is a quota limit that bounds nothing.
const NoLimit = -1

// Quota is a scope's quota: its limits (NoLimit for a counter without
// one) and the usage counters kept for it.
type Quota struct {
	Scope  string
	Limits Usage
	Used   Usage
}

// Counters names the counters of a Usage, in the order Fields lists them.
var Counters = [...]string{"bytes", "files", "threads", "documents", "history bytes"}

// Fields returns pointers to u's counters, in the order of Counters.
func (u *Usage) Fields() [5]*int64 {
	return [5]*int64{&u.Bytes, &u.Files, &u.Threads, &u.Documents, &u.HistoryBytes}
}

// Unlimited reports whether no counter of l has a limit.
func (l Usage) Unlimited() bool {
	for _, f := range l.Fields() {
		if *f != NoLimit {
			return false
		}
	}
	return true
}

// QuotaError is a refusal by a scope's quota: the change would take
// Counter (one of Counters) to Would, over Limit. A backend returns it per
// entry (in AppendResult.Err) or from the call that creates a thread or a
// document; package satchel words it for users.
type QuotaError struct {
	Scope   string
	Counter string
	Would   int64
	Limit   int64
}

// Error words the refusal as users see it: sizes in binary units with two
// decimals, counts with commas between thousands, e.g.
// `quota exceeded: scope acme would hold 1.00 GiB of files, over its quota
// of 1.00 GiB` or `quota exceeded: scope acme would hold 100,001 files,
// over its quota of 100,000`.
func (e *QuotaError) Error() string {
	return errs.QuotaMessage(e.Scope, e.Counter, e.Would, e.Limit)
}

// Is makes a QuotaError match ErrQuotaExceeded.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

// Add adds d to q's usage, or returns the QuotaError of the first counter
// that d grows past its limit, leaving q unchanged. A counter that d does
// not grow is never refused (a scope over a limit lowered under its usage
// can still shrink). Every backend checks its quotas with Add (PostgreSQL
// in SQL too, with the same rule, then Add for the error).
func (q *Quota) Add(d Usage) error {
	used, lim, delta := q.Used.Fields(), q.Limits.Fields(), d.Fields()
	for i := range used {
		if *delta[i] > 0 && *lim[i] != NoLimit && *used[i]+*delta[i] > *lim[i] {
			return &QuotaError{Scope: q.Scope, Counter: Counters[i], Would: *used[i] + *delta[i], Limit: *lim[i]}
		}
	}
	for i := range used {
		*used[i] += *delta[i]
	}
	return nil
}

// LiveFunc returns, for each head commit of heads (in order), the number
// of files of its tree and their bytes: what the engine counts and a
// backend cannot (roots are opaque to it). A head with Seq 0 is an empty
// thread.
type LiveFunc func(ctx context.Context, heads []Commit) (files, bytes []int64, err error)

// Quotas is the part of the contract that keeps per-scope quotas. A scope
// has a quota row only once a limit is set for it; only then does every
// change to the scope update the row's counters, in the transaction that
// makes the change, and refuse one that would grow a counter past its
// limit (Quota.Add). Scopes without a row cost nothing more per write.
//
// Counters move with: Append (NewCommit.DeltaFiles and DeltaBytes, and
// the pack's length), thread creation (Threads+1, refused over the
// limit) and deletion (Threads-1 and the head commit's Files and Bytes),
// document creation and removal, DeletePacks and RewritePack (the packs'
// lengths), and PurgeScope (which removes the row). Each backend stores
// NewCommit.Files and Bytes with the commit for the deletion of its
// thread.
type Quotas interface {
	// SetQuota sets a scope's limits. When the scope has no row yet, its
	// usage is counted first, exactly: while no other change to the
	// scope's threads, commits and documents can land, the backend counts
	// threads, documents and pack bytes itself and calls live for the
	// heads, stores each head's totals with it, and inserts the row.
	// Limits that are all NoLimit remove the row.
	SetQuota(ctx context.Context, scope string, limits Usage, live LiveFunc) error
	// Quotas returns the quota rows, of one scope ("" for every scope with
	// a row), by scope.
	Quotas(ctx context.Context, scope string) ([]Quota, error)
	// CountUsage counts a scope's usage from what it stores (the recount
	// the storage check compares a row with) and returns it with the
	// scope's row (nil without one), both read in one snapshot.
	CountUsage(ctx context.Context, scope string, live LiveFunc) (counted Usage, row *Quota, err error)
}
