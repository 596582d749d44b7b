package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bytesize"
)

// limitFlags are the flags of `limits set`: the workspace bounds of
// DESIGN §2.4, a size or a count, or "none" (back to the scope's, or the
// default).
var limitFlags = []struct {
	name, usage string
	size        bool
	field       func(l *satchel.Limits) *int64
}{
	{"file-bytes", "bound one file's content to `SIZE` (64MiB, 1024; none: the scope's or the default, 64 MiB)", true, func(l *satchel.Limits) *int64 { return &l.MaxFileBytes }},
	{"bytes", "bound the workspace's paths and contents, counted as JSON, to `SIZE` (none: the default, 1 GiB)", true, func(l *satchel.Limits) *int64 { return &l.MaxBytes }},
	{"files", "bound the workspace's files to `N` (none: the default, 1,000,000)", false, func(l *satchel.Limits) *int64 { return &l.MaxFiles }},
}

// limitsResult is what `limits set --json` and `limits show --json` print.
type limitsResult struct {
	Scope  string `json:"scope"`
	Thread string `json:"thread,omitempty"`
	// Limits are the bounds in force; Scope and ThreadLimits those set on
	// the scope and on the thread (unset ones left out).
	Limits       satchel.Limits  `json:"limits"`
	ScopeLimits  satchel.Limits  `json:"scope_limits"`
	ThreadLimits *satchel.Limits `json:"thread_limits,omitempty"`
}

func newLimitsCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("limits", "Show or set the bounds of a scope's workspaces",
		`Every workspace is bounded (DESIGN §2.4): one file's content (default
64 MiB), its files (1,000,000) and its bytes, every path and content
counted as a JSON string (1 GiB). Bounds set on a scope apply to each of
its threads; bounds set on a thread override the scope's, bound by bound.
A write that would go past one is refused whole: "limit exceeded: ...".`,
		`  satchel limits set --scope acme --file-bytes 8MiB --files 10000
  satchel limits set --scope acme --thread draft --bytes 100MiB
  satchel limits show --scope acme --thread draft`)
	cmd.GroupID = groupAdmin
	cmd.AddCommand(newLimitsSetCmd(a), newLimitsShowCmd(a))
	return cmd
}

// limitsThread is the thread --thread names on the command line, or ""
// (the scope) when it is not given.
func (a *app) limitsThread() string {
	if a.root != nil && a.root.PersistentFlags().Changed("thread") {
		return a.thread
	}
	return ""
}

func newLimitsSetCmd(a *app) *cobra.Command {
	vals := make([]string, len(limitFlags))
	cmd := &cobra.Command{
		Use:   "set --scope S [--thread T] [--file-bytes SIZE] [--bytes SIZE] [--files N]",
		Short: "Set the bounds of a scope, or of one of its threads",
		Long: `Set the bounds of the scope (--scope), or with --thread of that thread
alone. Only the bounds given change; "none" unsets one (the scope's, or
the default, applies again). Sizes are whole bytes, or with a unit: KiB,
MiB, GiB (K, KB, M, MB, G, GB mean the same powers of 1024). Workspaces
opened afterwards, in any process, apply them.

Prints the bounds as limits show does.`,
		Example: `  satchel limits set --scope acme --file-bytes 8MiB --bytes 256MiB --files 10000
  satchel limits set --scope acme --thread draft --files none`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := satchel.ValidScope(a.scope); err != nil {
				return err
			}
			thread := a.limitsThread()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			l, err := s.OwnLimits(ctx, a.scope, thread)
			if err != nil {
				return err
			}
			changed := false
			for i, lf := range limitFlags {
				if !cmd.Flags().Changed(lf.name) {
					continue
				}
				n, err := parseLimit(lf.name, vals[i], lf.size)
				if err != nil {
					return err
				}
				*lf.field(&l) = n
				changed = true
			}
			if !changed {
				return usagef("limits set needs at least one of --file-bytes, --bytes, --files")
			}
			if err := s.SetLimits(ctx, a.scope, thread, l); err != nil {
				return err
			}
			return a.emitLimits(cmd, s, thread)
		},
	}
	for i, lf := range limitFlags {
		cmd.Flags().StringVar(&vals[i], lf.name, "", lf.usage)
	}
	return cmd
}

func newLimitsShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [--scope S] [--thread T]",
		Short: "Show the bounds in force for a scope or a thread",
		Long: `Show the bounds in force for the scope (--scope), or with --thread for
that thread, and where each comes from: the thread, the scope or the
default.

Prints one line a bound: "file-bytes 64.00 MiB (default)", "bytes ...",
"files ...". With --json, {"scope": S, "thread": T, "limits":
{"max_file_bytes": N, "max_bytes": N, "max_files": N}, "scope_limits":
{...}, "thread_limits": {...}}: the bounds in force, then those set on the
scope and on the thread (unset ones left out).`,
		Example: `  satchel limits show --scope acme
  satchel limits show --scope acme --thread draft --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := satchel.ValidScope(a.scope); err != nil {
				return err
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			return a.emitLimits(cmd, s, a.limitsThread())
		},
	}
}

// emitLimits prints the bounds in force for the scope (thread "") or the
// thread, with where each comes from.
func (a *app) emitLimits(cmd *cobra.Command, s *satchel.Store, thread string) error {
	ctx := cmd.Context()
	r := limitsResult{Scope: a.scope, Thread: thread}
	var err error
	if r.Limits, err = s.LimitsOf(ctx, a.scope, thread); err != nil {
		return err
	}
	if r.ScopeLimits, err = s.OwnLimits(ctx, a.scope, ""); err != nil {
		return err
	}
	var own satchel.Limits
	if thread != "" {
		if own, err = s.OwnLimits(ctx, a.scope, thread); err != nil {
			return err
		}
		r.ThreadLimits = &own
	}
	return a.emit(r, func(w io.Writer) error {
		for _, lf := range limitFlags {
			from := "default"
			switch {
			case *lf.field(&own) != 0:
				from = "thread " + thread
			case *lf.field(&r.ScopeLimits) != 0:
				from = "scope " + a.scope
			}
			v := *lf.field(&r.Limits)
			f := bytesize.Count(v)
			if lf.size {
				f = bytesize.Format(v)
			}
			if _, err := fmt.Fprintf(w, "%s %s (%s)\n", lf.name, f, from); err != nil {
				return err
			}
		}
		return nil
	})
}
