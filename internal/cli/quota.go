package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bytesize"
)

// quotaResult is what `quota set --json` and `quota show --json` print:
// one entry per scope.
type quotaResult struct {
	Quotas []satchel.ScopeQuota `json:"quotas"`
}

func newQuotaCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("quota", "Show or set the quotas of a scope",
		`A scope's quotas bound what all its threads hold together: the bytes of
its files (counted as the workspace bounds count them), its files, threads
and documents, and the bytes its history keeps stored. A change that would
take the scope past one is refused whole, with exit status 1 and
"quota exceeded: scope S would hold ..., over its quota of ..." on stderr.`,
		`  satchel quota set --scope acme --bytes 1GiB --files 100000
  satchel quota show --scope acme`)
	cmd.GroupID = groupAdmin
	cmd.AddCommand(newQuotaSetCmd(a), newQuotaShowCmd(a))
	return cmd
}

// quotaFlags are the flags of `quota set`: sizes or counts, or "none".
var quotaFlags = []struct {
	name, usage string
	size        bool
	field       func(q *satchel.Quota) *int64
}{
	{"bytes", "bound the bytes of the scope's files to `SIZE` (1GiB, 500MB, 1024; none: no bound)", true, func(q *satchel.Quota) *int64 { return &q.Bytes }},
	{"files", "bound the scope's files to `N` (none: no bound)", false, func(q *satchel.Quota) *int64 { return &q.Files }},
	{"threads", "bound the scope's threads to `N` (none: no bound)", false, func(q *satchel.Quota) *int64 { return &q.Threads }},
	{"documents", "bound the scope's documents to `N` (none: no bound)", false, func(q *satchel.Quota) *int64 { return &q.Documents }},
	{"history-bytes", "bound the bytes the scope's history keeps stored to `SIZE` (none: no bound)", true, func(q *satchel.Quota) *int64 { return &q.HistoryBytes }},
}

// parseLimit reads a quota flag's value: "none", a count, or a size.
func parseLimit(name, v string, size bool) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		return 0, nil
	}
	if size {
		n, err := bytesize.Parse(v)
		if err != nil || n == 0 {
			return 0, usagef("--%s: %q is not a size (1GiB, 500MB, 1024) or none", name, v)
		}
		return n, nil
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(v), ",", ""), 10, 64)
	if err != nil || n <= 0 {
		return 0, usagef("--%s: %q is not a positive count or none", name, v)
	}
	return n, nil
}

func newQuotaSetCmd(a *app) *cobra.Command {
	vals := make([]string, len(quotaFlags))
	cmd := &cobra.Command{
		Use:   "set --scope S [--bytes SIZE] [--files N] [--threads N] [--documents N] [--history-bytes SIZE]",
		Short: "Set the quotas of a scope",
		Long: `Set the quotas of the scope (--scope). Only the quotas given change; the
others keep their values. "none" removes a quota; a scope without any
quota keeps no counters. Sizes are whole bytes, or with a unit: KiB, MiB,
GiB, TiB (K, KB, M, MB, G, GB, T, TB mean the same powers of 1024).

The first quota of a scope counts what it already holds, once; from then
on each change updates the counters in its own transaction.

Prints the scope's quotas as quota show does.`,
		Example: `  satchel quota set --scope acme --bytes 1GiB --files 100000 --threads 1000 --documents 1000000 --history-bytes 10GiB
  satchel quota set --scope acme --bytes none`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			cur, err := s.Quota(ctx, a.scope)
			if err != nil {
				return err
			}
			q := cur.Limits
			changed := false
			for i, qf := range quotaFlags {
				if !cmd.Flags().Changed(qf.name) {
					continue
				}
				n, err := parseLimit(qf.name, vals[i], qf.size)
				if err != nil {
					return err
				}
				*qf.field(&q) = n
				changed = true
			}
			if !changed {
				return usagef("quota set needs at least one of --bytes, --files, --threads, --documents, --history-bytes")
			}
			if err := s.SetQuota(ctx, a.scope, q); err != nil {
				return err
			}
			now, err := s.Quota(ctx, a.scope)
			if err != nil {
				return err
			}
			return a.emitQuotas([]satchel.ScopeQuota{now})
		},
	}
	for i, qf := range quotaFlags {
		cmd.Flags().StringVar(&vals[i], qf.name, "", qf.usage)
	}
	return cmd
}

func newQuotaShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [--scope S]",
		Short: "Show the quotas of scopes and their usage",
		Long: `Show the usage and quota of the scope (--scope), or, without --scope, of
every scope that has a quota.

Prints one line per quota: "SCOPE QUOTA used USAGE of LIMIT" (LIMIT
"none" when unset). With --json, {"quotas": [{"scope": S, "limits":
{"bytes": N, "files": N, "threads": N, "documents": N, "history_bytes": N},
"used": {...the same keys...}}]} (unset limits are left out).`,
		Example: `  satchel quota show --scope acme
  satchel quota show --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			var qs []satchel.ScopeQuota
			if f := cmd.Flag("scope"); f != nil && f.Changed {
				q, err := s.Quota(ctx, a.scope)
				if err != nil {
					return err
				}
				qs = []satchel.ScopeQuota{q}
			} else if qs, err = s.Quotas(ctx); err != nil {
				return err
			}
			return a.emitQuotas(qs)
		},
	}
}

func (a *app) emitQuotas(qs []satchel.ScopeQuota) error {
	if qs == nil {
		qs = []satchel.ScopeQuota{}
	}
	return a.emit(quotaResult{Quotas: qs}, func(w io.Writer) error {
		for _, q := range qs {
			rows := []struct {
				name        string
				used, limit int64
				size        bool
			}{
				{"bytes", q.Used.Bytes, q.Limits.Bytes, true},
				{"files", q.Used.Files, q.Limits.Files, false},
				{"threads", q.Used.Threads, q.Limits.Threads, false},
				{"documents", q.Used.Documents, q.Limits.Documents, false},
				{"history-bytes", q.Used.HistoryBytes, q.Limits.HistoryBytes, true},
			}
			for _, r := range rows {
				f := bytesize.Count
				if r.size {
					f = bytesize.Format
				}
				limit := "none"
				if r.limit > 0 {
					limit = f(r.limit)
				}
				if _, err := fmt.Fprintf(w, "%s %s used %s of %s\n", q.Scope, r.name, f(r.used), limit); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
