package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newReviewCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("review", "List, show, approve and reject the changes that wait for review",
		`The changes of an agent whose token was made with --review (or whose
agent.json says "review": true) never reach its thread directly: its
session's first change forks a review thread, review-R-XXXXXXXX, and every
change of the session goes there. A person then approves the review (a
merge into the thread, refused on conflicts as satchel merge refuses them)
or rejects it (its thread is archived); the agent's next call is told.
The audit trail (satchel audit) records who decided, and when.`,
		`  satchel review list
  satchel review show R-7K2M9Q4X
  satchel review approve R-7K2M9Q4X
  satchel review reject R-7K2M9Q4X --reason "touches the wrong section"`)
	cmd.GroupID = groupVersions
	cmd.AddCommand(newReviewListCmd(a), newReviewShowCmd(a), newReviewApproveCmd(a), newReviewRejectCmd(a))
	return cmd
}

// age renders how long ago t was, in its largest unit: 42s, 5m, 3h, 2d.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d/time.Second), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

func newReviewListCmd(a *app) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "list [--scope S] [--state open|approved|rejected|all]",
		Short: "List the reviews",
		Long: `List the open reviews (--state chooses others), oldest first, one a line:
ID, SCOPE, THREAD, AGENT (empty for an operator), FILES (the files the
review changes), AGE (since the review was opened: 42s, 5m, 3h, 2d) and
STATE, separated by tabs; on a terminal, in aligned columns under a header
row. Without --scope, the reviews of every scope.

With --json, an array of reviews: {"id", "scope", "thread",
"review_thread", "base", "fork", "agent", "token", "created", "state",
"decided_by", "decided_at", "reason", "merge", "files"}.`,
		Example: `  satchel review list
  satchel review list --scope acme --state all --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			q := satchel.ReviewQuery{State: state}
			if state == "all" {
				q.State = ""
			}
			if cmd.Root().PersistentFlags().Changed("scope") {
				q.Scope = a.scope
			}
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			rs, err := st.ListReviews(ctx, q)
			if err != nil {
				return err
			}
			now, err := st.Now(ctx)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, r := range rs {
				fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Scope, r.Thread, r.Agent, r.Files, age(now, r.Created), r.State)
			}
			return a.emit(rs, table([]string{"ID", "SCOPE", "THREAD", "AGENT", "FILES", "AGE", "STATE"}, b.String()))
		},
	}
	cmd.Flags().StringVar(&state, "state", "open", "list the reviews in `STATE`: open, approved, rejected or all")
	return cmd
}

// reviewShown is what `review show --json` prints.
type reviewShown struct {
	satchel.Review
	Changes []satchel.Change `json:"changes"`
	Diff    string           `json:"diff"`
}

func newReviewShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a review and its diff against the thread",
		Long: `Show review ID: a line that says whose changes it holds, for which thread,
and in what state, then the unified diff of every file it changes against
the thread's commit it was forked from.

With --json, the review (as review list --json prints one) with "changes"
(each {"path", "kind"}) and "diff".`,
		Example: `  satchel review show R-7K2M9Q4X`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			r, err := st.Review(ctx, args[0])
			if err != nil {
				return err
			}
			cs, err := st.ReviewChanges(ctx, r)
			if err != nil {
				return err
			}
			d, err := st.ReviewDiff(ctx, r)
			if err != nil {
				return err
			}
			out := reviewShown{Review: r, Changes: cs, Diff: d}
			return a.emit(out, text(reviewHeader(r)+"\n"+d))
		},
	}
}

// reviewHeader says what a review is in a line.
func reviewHeader(r satchel.Review) string {
	who := "an operator"
	if r.Agent != "" {
		who = "agent " + r.Agent
	}
	s := fmt.Sprintf("review %s: changes of %s to thread %s of scope %s, %s (on %s from %s@%d), %s", r.ID, who, r.Thread, r.Scope,
		plural(r.Files, "file"), r.ReviewThread, r.Thread, r.Base, r.State)
	if r.State != satchel.ReviewOpen {
		s += " by " + r.DecidedBy + " at " + stamp(r.DecidedAt)
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// reviewDecided is what approve and reject print with --json.
type reviewDecided struct {
	Review satchel.Review       `json:"review"`
	Merge  *satchel.MergeResult `json:"merge,omitempty"`
}

func newReviewApproveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a review: merge its changes into the thread",
		Long: `Approve review ID: merge its review thread into the thread it was forked
from, as satchel merge does (a merge with conflicts is refused, nothing
changes and the review stays open: resolve them on the thread, or reject
the review), then archive the review thread. The merge commit and the
archive entry record who approved; the agent's next call is told.`,
		Example: `  satchel review approve R-7K2M9Q4X`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			r, m, err := st.ApproveReview(ctx, args[0], a.actor())
			if err != nil {
				return err
			}
			return a.emit(reviewDecided{Review: r, Merge: &m}, text("approved review "+r.ID+": "+m.Message()+"\n"))
		},
	}
}

func newReviewRejectCmd(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "reject ID [--reason TEXT]",
		Short: "Reject a review: its changes never reach the thread",
		Long: `Reject review ID: archive its review thread (it stays readable; its
changes never reach the thread). The agent's next call is told, with
--reason when given. The archive entry records who rejected.`,
		Example: `  satchel review reject R-7K2M9Q4X --reason "touches the wrong section"`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			r, err := st.RejectReview(ctx, args[0], reason, a.actor())
			if err != nil {
				return err
			}
			return a.emit(reviewDecided{Review: r}, text("rejected review "+r.ID+": thread "+r.ReviewThread+" is archived\n"))
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, told to the agent (one line)")
	return cmd
}
