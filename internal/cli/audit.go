package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newAuditCmd(a *app) *cobra.Command {
	var (
		agent, tool, since string
		limit              int
	)
	cmd := &cobra.Command{
		Use:     "audit",
		GroupID: groupAdmin,
		Short:   "List who changed what, newest first",
		Long: `List the changes of the database, newest first: every retained commit of
every thread, and every set and remove of a document. Without --scope, of
every scope. One change a line: TIME (RFC 3339, UTC), SCOPE, WHAT
(THREAD@SEQ for a commit, COLLECTION/KEY for a document), AGENT,
CREDENTIAL (a token's id, never its secret), TOOL (the MCP tool or the
command), CLIENT (the MCP client's name/version), IDEMPOTENCY KEY and
SUMMARY, separated by tabs, "-" when empty; on a terminal, in aligned
columns under a header row.

--agent A keeps one agent's changes ("-": an operator's); --tool T those
made through one tool or command (write_file, mcp:write_file, "fs write");
--since T those at or after T (RFC 3339, or a duration such as 24h for
that long ago); --limit N the newest N (default 100, at most 1000).

Paths, document keys, client names and idempotency keys are text an agent
chose: in the lines, control characters and backslashes are escaped and
"<" is written "&lt;". File contents and document bodies are never listed.

With --json, {"entries": [{"time": ..., "scope": ..., "thread": ...,
"seq": N, "collection": ..., "key": ..., "version": N, "op": ...,
"agent": ..., "credential": ..., "via": ..., "client": ...,
"client_version": ..., "idempotency_key": ..., "summary": ...}],
"next_cursor": ...}.`,
		Example: `  satchel audit --since 24h
  satchel audit --scope acme --agent research --json
  satchel audit --tool write_file`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := notNegative("limit", limit); err != nil {
				return err
			}
			q := satchel.AuditQuery{Agent: agent, Tool: tool, Limit: limit}
			if a.root.PersistentFlags().Changed("scope") {
				q.Scope = a.scope
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return err
				}
				q.Since = t
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			page, err := s.Audit(ctx, q)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, e := range page.Entries {
				b.WriteString(e.String() + "\n")
			}
			return a.emit(page, table([]string{"TIME", "SCOPE", "WHAT", "AGENT", "CREDENTIAL", "TOOL", "CLIENT", "IDEMPOTENCY KEY", "SUMMARY"}, b.String()))
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only the changes of agent `A` (\"-\": an operator's)")
	f.StringVar(&tool, "tool", "", "only the changes made through tool or command `T`")
	f.StringVar(&since, "since", "", "only the changes at or after `T` (RFC 3339, or a duration ago such as 24h)")
	f.IntVar(&limit, "limit", 0, "list the newest `N` changes (default 100, at most 1000)")
	return cmd
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, refuse("invalid --since %q: give an RFC 3339 time (2026-12-01T00:00:00Z) or a duration ago (24h)", s)
}
