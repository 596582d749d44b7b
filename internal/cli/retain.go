package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// retainResult is what `retain --json` prints.
type retainResult struct {
	Policy satchel.Policy `json:"policy"`
	// Dropped is how many commits applying the policy dropped; absent when
	// the policy was only shown, or was the scope's default.
	Dropped *int `json:"dropped,omitempty"`
	// Default marks the scope's default policy (--default).
	Default bool `json:"default,omitempty"`
}

func newRetainCmd(a *app) *cobra.Command {
	var (
		maxAge                     time.Duration
		maxCommits, maxCheckpoints int
		asDefault, clear           bool
	)
	cmd := &cobra.Command{
		Use:     "retain [--default] [--max-commits N] [--max-age DUR] [--max-checkpoints N]",
		GroupID: groupVersions,
		Short:   "Show or set the retention policy of a thread",
		Long: `Set the retention policy of the thread (--scope, --thread) and apply it now.
Only the rules given change; the others keep their values. A commit is
dropped only when every rule that is set allows it: it is older than
--max-age, not among the newest --max-commits commits and, if it is a
checkpoint, not among the newest --max-checkpoints checkpoints (checkpoints
are kept when that rule is not set). The head is never dropped. The storage
of dropped commits is reclaimed by gc.

Without a flag, shows the current policy (a thread without a policy of its
own has the default of its scope that was in force when it was created).

With --default, sets (or shows) the default policy of --scope instead: the
policy that the scope's threads created from now on take (forks
included), until they are given one of their own. Existing threads keep
theirs, and nothing is dropped now (gc applies it). --clear removes the
default, for the threads created afterwards.

Prints the policy as "key: value" lines (max-age, max-commits,
max-checkpoints; "unset" for a rule that is not set) and, when it was set,
"dropped: N". With --json, {"policy": {"max_age": NANOSECONDS,
"max_commits": N, "max_checkpoints": N}, "dropped": N} (unset rules and,
when only shown, "dropped" are left out); with --default, "default": true
instead of "dropped".`,
		Example: `  satchel retain --max-commits 100 --max-age 720h
  satchel retain --max-checkpoints 10
  satchel retain
  satchel retain --scope acme --default --max-commits 50`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			f := cmd.Flags()
			var in satchel.PolicyInput
			if f.Changed("max-age") {
				in.MaxAge = &maxAge
			}
			if f.Changed("max-commits") {
				in.MaxCommits = &maxCommits
			}
			if f.Changed("max-checkpoints") {
				in.MaxCheckpoints = &maxCheckpoints
			}
			set, err := in.Valid()
			if err != nil {
				return err
			}
			if clear && !asDefault {
				return refuse("--clear removes the scope's default policy: give --default with it")
			}
			if asDefault {
				if a.root != nil && a.root.PersistentFlags().Changed("thread") {
					return refuse("--default sets the policy of scope %s, not of a thread: leave out --thread %s", a.scope, a.thread)
				}
				if clear && (in.MaxAge != nil || in.MaxCommits != nil || in.MaxCheckpoints != nil) {
					return refuse("--clear removes the default policy: give no rule with it")
				}
				return a.retainDefault(cmd, in, set, clear)
			}
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			p, err := ws.Retention(ctx)
			if err != nil {
				return err
			}
			res := retainResult{Policy: p}
			if in.MaxAge != nil || in.MaxCommits != nil || in.MaxCheckpoints != nil {
				if in.MaxAge != nil {
					p.MaxAge = set.MaxAge
				}
				if in.MaxCommits != nil {
					p.MaxCommits = set.MaxCommits
				}
				if in.MaxCheckpoints != nil {
					p.MaxCheckpoints = set.MaxCheckpoints
				}
				n, err := ws.SetRetention(ctx, p)
				if err != nil {
					return err
				}
				res = retainResult{Policy: p, Dropped: &n}
			}
			return a.emitRetain(res)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asDefault, "default", false, "set or show the default policy of --scope, for its new threads")
	f.BoolVar(&clear, "clear", false, "with --default, remove the scope's default policy")
	f.DurationVar(&maxAge, "max-age", 0, "drop commits older than `DUR` (e.g. 720h)")
	f.IntVar(&maxCommits, "max-commits", 0, "keep at least the newest `N` commits")
	f.IntVar(&maxCheckpoints, "max-checkpoints", 0, "keep at least the newest `N` checkpoints")
	return cmd
}

// retainDefault runs retain --default: the scope's default policy, with
// the rules given changed.
func (a *app) retainDefault(cmd *cobra.Command, in satchel.PolicyInput, set satchel.Policy, clear bool) error {
	ctx := cmd.Context()
	s, err := a.open(ctx)
	if err != nil {
		return err
	}
	p, err := s.DefaultRetention(ctx, a.scope)
	if err != nil {
		return err
	}
	changed := clear || in.MaxAge != nil || in.MaxCommits != nil || in.MaxCheckpoints != nil
	if clear {
		p = satchel.Policy{}
	}
	if in.MaxAge != nil {
		p.MaxAge = set.MaxAge
	}
	if in.MaxCommits != nil {
		p.MaxCommits = set.MaxCommits
	}
	if in.MaxCheckpoints != nil {
		p.MaxCheckpoints = set.MaxCheckpoints
	}
	if changed {
		if err := s.SetDefaultRetention(ctx, a.scope, p); err != nil {
			return err
		}
	}
	return a.emitRetain(retainResult{Policy: p, Default: true})
}

// emitRetain prints retain's result.
func (a *app) emitRetain(res retainResult) error {
	return a.emit(res, func(w io.Writer) error {
		unset := func(set bool, v string) string {
			if !set {
				return "unset"
			}
			return v
		}
		p := res.Policy
		_, err := fmt.Fprintf(w, "max-age: %s\nmax-commits: %s\nmax-checkpoints: %s\n",
			unset(p.MaxAge > 0, p.MaxAge.String()),
			unset(p.MaxCommits > 0, strconv.Itoa(p.MaxCommits)),
			unset(p.MaxCheckpoints > 0, strconv.Itoa(p.MaxCheckpoints)))
		if err == nil && res.Dropped != nil {
			_, err = fmt.Fprintf(w, "dropped: %d\n", *res.Dropped)
		}
		return err
	})
}

func newGCCmd(a *app) *cobra.Command {
	var grace time.Duration
	var all bool
	cmd := &cobra.Command{
		Use:     "gc [--all | --scope S]",
		GroupID: groupVersions,
		Short:   "Apply retention and reclaim unreachable storage",
		Long: `Apply every thread's retention policy, in every scope of the database, then
reclaim the storage that no retained commit reaches. It is safe while
writers run. Every scope is collected without a flag, as with --all; a
--scope given explicitly collects that scope only. Storage of commits
dropped less than --grace ago is kept, so a reader at such a commit can
finish (default ` + satchel.DefaultGrace.String() + `).

Prints what it did: "dropped N commits, deleted N packs, rewrote N packs",
then, when the grace kept some, "; N packs dropped less than 1m ago were
kept; --grace 0s reclaims them now"; with --json, the GCStats:
{"dropped": N, "packs_deleted": N, "packs_rewritten": N, "packs_kept": N}.`,
		Example: `  satchel gc
  satchel gc --all --grace 0s --db team.db
  satchel gc --scope acme`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if grace < 0 {
				return refuse("--grace must not be negative, was %s", grace)
			}
			scope := ""
			if a.root != nil && a.root.PersistentFlags().Changed("scope") {
				if all {
					return refuse("--all collects every scope and --scope %s only one: give one of them", a.scope)
				}
				if err := satchel.ValidScope(a.scope); err != nil {
					return err
				}
				scope = a.scope
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			if grace == 0 {
				grace = satchel.NoGrace // --grace 0s: none (GC's zero is its default)
			}
			st, err := s.GC(ctx, scope, grace)
			if err != nil {
				return err
			}
			return a.emit(st, func(w io.Writer) error {
				kept := ""
				if st.PacksKept > 0 {
					kept = fmt.Sprintf("; %d packs dropped less than %s ago were kept; --grace 0s reclaims them now",
						st.PacksKept, shortDuration(grace))
				}
				_, err := fmt.Fprintf(w, "dropped %d commits, deleted %d packs, rewrote %d packs%s\n",
					st.Dropped, st.PacksDeleted, st.PacksRewritten, kept)
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", satchel.DefaultGrace, "keep the storage of commits dropped less than `DUR` ago")
	cmd.Flags().BoolVar(&all, "all", false, "collect every scope (what gc does without --scope)")
	return cmd
}

// shortDuration writes d as an operator types it: 1m, 90s as 1m30s, 1h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
