package satchel

import (
	"context"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Quota is what a scope may hold, across all its threads (where Limits
// bound one workspace): the live bytes of its files (counted as DESIGN
// §2.4 counts a workspace's), the number of its files, threads and
// documents, and the bytes its history keeps stored (the packs of its
// commits, retained or dropped and not yet collected). A zero field
// bounds nothing.
type Quota struct {
	Bytes        int64 `json:"bytes,omitempty"`
	Files        int64 `json:"files,omitempty"`
	Threads      int64 `json:"threads,omitempty"`
	Documents    int64 `json:"documents,omitempty"`
	HistoryBytes int64 `json:"history_bytes,omitempty"`
}

// Usage is what a scope holds, counted as Quota bounds it.
type Usage struct {
	Bytes        int64 `json:"bytes"`
	Files        int64 `json:"files"`
	Threads      int64 `json:"threads"`
	Documents    int64 `json:"documents"`
	HistoryBytes int64 `json:"history_bytes"`
}

// ScopeQuota is a scope's quota with its usage.
type ScopeQuota struct {
	Scope string `json:"scope"`
	// Limits is the quota; zero fields bound nothing, and all zero means
	// the scope has no quota.
	Limits Quota `json:"limits"`
	// Used is the scope's usage: the counters kept for a scope with a
	// quota, counted from storage for one without.
	Used Usage `json:"used"`
}

// SetQuota sets a scope's quota; a zero field removes that limit, and an
// all-zero Quota removes the scope's quota. From then on every change to
// the scope (a commit, a new thread, a new document) that would take a
// counter past its limit is refused whole with ErrQuotaExceeded, checked
// in the transaction that would store it, so that writers racing to a
// limit in other processes cannot both pass it. A change that shrinks
// usage is never refused, even over a limit set below the usage.
//
// Usage is kept as counters updated with each change, not counted again
// per write: the first SetQuota of a scope counts what it already holds,
// once, while changes to the store wait for that count.
func (s *Store) SetQuota(ctx context.Context, scope string, q Quota) error {
	if err := ValidScope(scope); err != nil {
		return err
	}
	l := backend.Usage{Bytes: q.Bytes, Files: q.Files, Threads: q.Threads, Documents: q.Documents, HistoryBytes: q.HistoryBytes}
	for _, f := range l.Fields() {
		switch {
		case *f < 0:
			return errs.New(errs.ErrInvalidArgument, "a quota must not be negative")
		case *f == 0:
			*f = backend.NoLimit
		}
	}
	return s.b.SetQuota(ctx, scope, l, s.eng.Live)
}

// Quota returns a scope's quota and its usage. A scope without a quota
// has its usage counted from storage (it keeps no counters).
func (s *Store) Quota(ctx context.Context, scope string) (ScopeQuota, error) {
	if err := ValidScope(scope); err != nil {
		return ScopeQuota{}, err
	}
	qs, err := s.b.Quotas(ctx, scope)
	if err != nil {
		return ScopeQuota{}, err
	}
	if len(qs) == 1 {
		return scopeQuota(qs[0]), nil
	}
	u, _, err := s.b.CountUsage(ctx, scope, s.eng.Live)
	if err != nil {
		return ScopeQuota{}, err
	}
	return ScopeQuota{Scope: scope, Used: usage(u)}, nil
}

// Quotas lists the scopes that have a quota, by scope.
func (s *Store) Quotas(ctx context.Context) ([]ScopeQuota, error) {
	qs, err := s.b.Quotas(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]ScopeQuota, len(qs))
	for i, q := range qs {
		out[i] = scopeQuota(q)
	}
	return out, nil
}

func scopeQuota(q backend.Quota) ScopeQuota {
	l := q.Limits
	for _, f := range l.Fields() {
		if *f == backend.NoLimit {
			*f = 0
		}
	}
	return ScopeQuota{Scope: q.Scope, Used: usage(q.Used),
		Limits: Quota{Bytes: l.Bytes, Files: l.Files, Threads: l.Threads, Documents: l.Documents, HistoryBytes: l.HistoryBytes}}
}

func usage(u backend.Usage) Usage {
	return Usage{Bytes: u.Bytes, Files: u.Files, Threads: u.Threads, Documents: u.Documents, HistoryBytes: u.HistoryBytes}
}
