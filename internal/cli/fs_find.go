package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newFSGlobCmd(a *app) *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "glob PATTERN",
		Short: "List the files matching a glob",
		Long: `Print the files matching PATTERN, sorted, one a line. "*" matches within
one path segment and "**", as a whole segment, matches zero or more
segments. Shell syntax that satchel's globs do not have ("?", "[", "{",
backslash escapes) is refused rather than matching nothing.
--at REF looks at a retained commit.

With --json, an array of paths: ["a.md","notes/b.md"] ([] when none).`,
		Example: `  satchel fs glob '**/*.md'
  satchel fs glob 'notes/*' --at draft-1`,
		Args: exactArgs("PATTERN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			paths, err := r.Glob(ctx, args[0])
			if err != nil {
				return err
			}
			if len(paths) == 0 {
				a.emptyNote("no files match " + args[0])
			}
			return a.emit(nonEmpty(paths), lines(paths))
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "look at commit `REF` (a sequence number or a checkpoint name)")
	return cmd
}

func newFSLsCmd(a *app) *cobra.Command {
	var (
		at    string
		limit int
	)
	cmd := &cobra.Command{
		Use:   "ls [DIR]",
		Short: "List the files under a directory",
		Long: `Print the files under DIR (the whole workspace when omitted), in path
order, one a line. Directories are implicit: only files are listed, with
their full paths. --limit N stops after N files; --at REF looks at a
retained commit.

With --json, an array of paths ([] when none).`,
		Example: `  satchel fs ls
  satchel fs ls notes --limit 100`,
		Args: argsBetween(nil, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := notNegative("limit", limit); err != nil {
				return err
			}
			dir := ""
			if len(args) > 0 {
				dir = args[0]
			}
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			paths, err := r.List(ctx, dir, satchel.ListOptions{Limit: limit})
			if err != nil {
				return err
			}
			return a.emit(nonEmpty(paths), lines(paths))
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "look at commit `REF` (a sequence number or a checkpoint name)")
	cmd.Flags().IntVar(&limit, "limit", 0, "list at most `N` files (0: all)")
	return cmd
}

func newFSGrepCmd(a *app) *cobra.Command {
	var (
		under, include, at string
		limit              int
		timeout            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "grep REGEX",
		Short: "Search the files for lines matching a regular expression",
		Long: `Print the lines matching REGEX (Go's RE2 syntax: linear time, no
backreferences) as "path:line:text", in path then line order.

--under DIR searches only that directory. --include GLOB keeps the files it
matches, like ripgrep's --glob: a pattern without "/" matches a file's
name, one with "/" its path relative to --under; a leading "!" excludes
the files the rest matches ('!*.md'). --limit N stops after N
matches (default ` + itoa(satchel.DefaultGrepLimit) + `), saying so on standard error.
--at REF searches a retained commit. --timeout D bounds the search (default
` + satchel.DefaultGrepTimeout.String() + `): a search that reaches it prints the matches found so far, then
"grep stopped after D" on standard error, and exits non-zero.

With --json, the GrepResult: {"matches": [{"path": ..., "line": N,
"text": ...}], "truncated": true} ("truncated" only when --limit cut it;
"stopped" says why a search ended before its end).`,
		Example: `  satchel fs grep TODO
  satchel fs grep 'func \w+' --under src --include '*.go' --limit 50`,
		Args: exactArgs("REGEX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := notNegative("limit", limit); err != nil {
				return err
			}
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			res, err := r.Grep(ctx, args[0], under, satchel.GrepOptions{Include: include, Limit: limit, Timeout: timeout})
			if err != nil {
				return err
			}
			res.Matches = nonEmpty(res.Matches)
			if a.json {
				if err := a.printJSON(res); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				for _, m := range res.Matches {
					fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
				}
				if _, err := io.WriteString(a.stdout, b.String()); err != nil {
					return err
				}
			}
			if len(res.Matches) == 0 && res.Stopped == "" {
				a.emptyNote("no matches for " + args[0])
			}
			if res.Truncated && !a.json {
				a.notice("grep stopped after %d matches; narrow the search or raise --limit", len(res.Matches))
			}
			if res.Stopped != "" {
				// The matches printed are not all: say so and fail.
				return &satchel.Error{Kind: satchel.ErrLimitExceeded, Msg: res.Stopped}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&under, "under", "", "search only under directory `DIR`")
	f.StringVar(&include, "include", "", "search only the files matching `GLOB`")
	f.StringVar(&at, "at", "", "search at commit `REF` (a sequence number or a checkpoint name)")
	f.IntVar(&limit, "limit", 0, "print at most `N` matches (0: the default limit)")
	f.DurationVar(&timeout, "timeout", 0, "stop the search after `D` (0: the default)")
	return cmd
}
