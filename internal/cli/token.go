package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newTokenCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("token", "Make, list and revoke the access tokens of the HTTP server",
		`Access tokens identify the callers of "satchel serve --http". A token names
the agent it speaks for, the one scope it can touch and, optionally, the one
thread; a caller sends it as "Authorization: Bearer <token>". The secret is
printed once, when the token is made: the database keeps only its SHA-256.`,
		`  satchel token create --agent research --scope acme --expires 720h
  satchel token list
  satchel token revoke 3f9c2a7b1d0e4f56`)
	cmd.GroupID = groupServe
	cmd.AddCommand(newTokenCreateCmd(a), newTokenListCmd(a), newTokenRevokeCmd(a))
	return cmd
}

// tokenCreated is what `token create --json` prints.
type tokenCreated struct {
	Secret string `json:"secret"`
	satchel.Token
}

func newTokenCreateCmd(a *app) *cobra.Command {
	var agent string
	var expires time.Duration
	var operator, review, readOnly bool
	var files string
	cmd := &cobra.Command{
		Use:   "create (--agent NAME --scope SCOPE [--thread THREAD] [--review] [--files RULES] [--read-only] | --operator) [--expires DURATION]",
		Short: "Make an access token and print its secret, once",
		Long: `Make a token for agent --agent in scope --scope (required: the only scope
the token can touch). With --thread, the token can touch only that thread;
without it, a session chooses its thread (header X-Satchel-Thread, default
main). --expires makes it expire after a duration (e.g. 720h); by default
it never expires. With --review, the token's changes wait for review: a
session of it never changes its thread, but a review thread of its own
that a person approves or rejects (satchel review).

--files and --read-only narrow what the token may do with the files of
its threads, below what its agent's agent.json allows (never more): --files
takes rules GLOB=ACCESS separated by commas, ACCESS one of rw, read, none,
the first matching glob deciding and a path none matches being none (e.g.
'notes/**=rw,**=read'); --read-only makes every path at most readable. A
path of access none is hidden (it reads as missing, no listing names it);
a read path refuses changes.

--operator makes a token for a person rather than an agent: it signs in
to the inspector (satchel ui) and sees every scope, read-only; it names no
agent, scope or thread, and the MCP server refuses it.

Prints the secret alone on standard output, and the token's ID (which
names it in lists, logs and commits) on standard error. The secret is not
stored and cannot be shown again. With --json, {"secret": ..., "id": ...,
"agent": ..., "scope": ..., "thread": ..., "created": ..., "expires": ...,
"review": true when --review}.`,
		Example: `  satchel token create --agent research --scope acme
  satchel token create --agent ci --scope acme --thread nightly --expires 24h
  satchel token create --agent intern --scope acme --review
  satchel token create --agent research --scope acme --files 'notes/**=rw,**=read'
  satchel token create --agent auditor --scope acme --read-only
  satchel token create --operator --expires 8h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pf := cmd.Root().PersistentFlags()
			var rules satchel.FileRules
			if cmd.Flags().Changed("files") {
				var err error
				if rules, err = satchel.ParseFileRules(files); err != nil {
					return usagef("token create: --files: %v", err)
				}
			}
			if operator {
				if rules != nil || readOnly {
					return usagef("token create: --operator takes no --files or --read-only")
				}
				if agent != "" || pf.Changed("scope") || pf.Changed("thread") {
					return usagef("token create: --operator names no --agent, --scope or --thread (it sees every scope)")
				}
				if review {
					return usagef("token create: --operator takes no --review (an operator's token changes nothing)")
				}
				return createToken(cmd, a, satchel.TokenSpec{Operator: true, Expires: expires})
			}
			if agent == "" {
				return usagef("token create: --agent is required (the agent the token speaks for), or --operator")
			}
			if !pf.Changed("scope") {
				return usagef("token create: --scope is required (the only scope the token can touch)")
			}
			thread := ""
			if pf.Changed("thread") {
				thread = a.thread
			}
			if w := unknownAgentWarning(agent); w != "" {
				a.notice("%s", w)
			}
			return createToken(cmd, a, satchel.TokenSpec{Agent: agent, Scope: a.scope, Thread: thread, Expires: expires, Review: review, Files: rules, ReadOnly: readOnly})
		},
	}
	globalHelp(cmd, map[string]string{
		"scope":  "the one scope the token can touch (required without --operator)",
		"thread": "the one thread the token can touch (default: any; a session picks it)",
	})
	cmd.Flags().StringVar(&agent, "agent", "", "the agent the token speaks for (required without --operator)")
	cmd.Flags().BoolVar(&operator, "operator", false, "an operator's token: reads every scope in the inspector")
	cmd.Flags().BoolVar(&review, "review", false, "the token's changes wait for review (satchel review)")
	cmd.Flags().DurationVar(&expires, "expires", 0, "expire after `DURATION` (e.g. 720h; default: never)")
	cmd.Flags().StringVar(&files, "files", "", "file `RULES` narrowing the agent's: GLOB=ACCESS,... (ACCESS rw, read or none)")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "every file at most readable")
	return cmd
}

func createToken(cmd *cobra.Command, a *app, spec satchel.TokenSpec) error {
	st, err := a.open(cmd.Context())
	if err != nil {
		return err
	}
	secret, t, err := st.CreateToken(cmd.Context(), spec)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(tokenCreated{Secret: secret, Token: t})
	}
	if t.Operator {
		a.notice("operator token %s: keep the secret now, it is not shown again", t.ID)
	} else {
		a.notice("token %s for agent %s in scope %s: keep the secret now, it is not shown again", t.ID, t.Agent, t.Scope)
	}
	_, err = fmt.Fprintln(a.stdout, secret)
	return err
}

// tokenStatus says whether a token can be used now.
func tokenStatus(t satchel.Token, now time.Time) string {
	switch {
	case !t.Revoked.IsZero():
		return "revoked"
	case !t.Expires.IsZero() && !now.Before(t.Expires):
		return "expired"
	}
	return "active"
}

// tokenListed is one token as `token list --json` prints it.
type tokenListed struct {
	satchel.Token
	Status string `json:"status"`
}

func newTokenListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the access tokens",
		Long: `List every token, oldest first, one a line: ID, AGENT, SCOPE, THREAD (empty
when the token allows any), CREATED, EXPIRES (empty: never), FILES (the
token's file rules as --files takes them, "read-only" for --read-only;
empty: its agent's alone), STATUS (active, expired or revoked) and
REVIEW ("yes" for a token made with --review, whose changes wait for
review; else "no"), separated by tabs; on a terminal, in aligned columns
under a header row.
Secrets are never shown: they are not stored.

With --json, an array of tokens, each with its "status".`,
		Example: `  satchel token list
  satchel --db team.db token list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			ts, err := st.Tokens(ctx)
			if err != nil {
				return err
			}
			now, err := st.Now(ctx)
			if err != nil {
				return err
			}
			out := make([]tokenListed, len(ts))
			for i, t := range ts {
				out[i] = tokenListed{Token: t, Status: tokenStatus(t, now)}
			}
			var b strings.Builder
			for _, t := range out {
				if t.Operator {
					t.Agent, t.Scope = "(operator)", "*"
				}
				review := "no"
				if t.Review {
					review = "yes"
				}
				fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Agent, t.Scope, t.Thread, stamp(t.Created), stamp(t.Expires), tokenFiles(t.Token), t.Status, review)
			}
			// REVIEW comes last, so that the columns before it keep their
			// places for scripts that cut them.
			return a.emit(out, table([]string{"ID", "AGENT", "SCOPE", "THREAD", "CREATED", "EXPIRES", "FILES", "STATUS", "REVIEW"}, b.String()))
		},
	}
}

func newTokenRevokeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an access token",
		Long: `Revoke the token with ID (as token list shows it): the server refuses it
from its next request on, so the sessions opened with it end too. The
token stays listed, as revoked, since commits name it.`,
		Example: `  satchel token revoke 3f9c2a7b1d0e4f56`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			if err := st.RevokeToken(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.emit(map[string]any{"id": args[0], "revoked": true}, text("revoked "+args[0]+"\n"))
		},
	}
}

// tokenFiles is the FILES column of token list: the token's rules in
// flag form, "read-only", or both separated by "; ".
func tokenFiles(t satchel.Token) string {
	var parts []string
	if t.ReadOnly {
		parts = append(parts, "read-only")
	}
	if t.Files != "" {
		parts = append(parts, t.Files)
	}
	return strings.Join(parts, "; ")
}
