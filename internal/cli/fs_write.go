package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// writeResult is what `fs write --json` prints.
type writeResult struct {
	Path      string `json:"path"`
	Size      int    `json:"size"`
	Hash      string `json:"hash"`
	Unchanged bool   `json:"unchanged,omitempty"`
}

func newFSWriteCmd(a *app) *cobra.Command {
	var ifHash string
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:   "write PATH [CONTENT]",
		Short: "Create or replace a file",
		Long: `Create or replace the file at PATH with CONTENT, or with standard input
when CONTENT is omitted. The write is one commit.

--if-hash H writes only if the file's content hash (as fs stat reports it)
is still H; otherwise it is refused as a conflict.

Prints nothing; with --json, {"path": ..., "size": N, "hash": ...}, the
hash being the one of the content written. Writing the content the file
already has makes no commit and prints "unchanged: PATH already has this
content" ("unchanged": true with --json).`,
		Example: `  satchel fs write notes/a.md "# Notes"
  cat report.txt | satchel fs write reports/today.txt
  satchel fs write notes/a.md "v2" --if-hash 9f86d08...`,
		Args: argsBetween([]string{"PATH"}, "CONTENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			l, err := ws.Limits(ctx)
			if err != nil {
				return err
			}
			content, err := a.input(args, 1, l.MaxFileBytes, "the per-file limit")
			if err != nil {
				return err
			}
			opts := kf.opts()
			if cmd.Flags().Changed("if-hash") {
				opts = append(opts, satchel.IfHash(ifHash))
			}
			var c satchel.Commit
			if err := ws.Write(ctx, args[0], content, append(opts, satchel.Committed(&c))...); err != nil {
				return err
			}
			var plain func(io.Writer) error
			if c.Unchanged {
				plain = text("unchanged: " + args[0] + " already has this content\n")
			}
			return a.emit(writeResult{Path: args[0], Size: len(content), Hash: satchel.Hash(content), Unchanged: c.Unchanged}, plain)
		},
	}
	cmd.Flags().StringVar(&ifHash, "if-hash", "", "write only if the file's content hash is still `H`")
	kf = addKeyFlag(cmd)
	return cmd
}

// appendResult is what `fs append --json` prints.
type appendResult struct {
	Path     string `json:"path"`
	Appended int    `json:"appended"`
}

func newFSAppendCmd(a *app) *cobra.Command {
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:   "append PATH [TEXT]",
		Short: "Add text at the end of a file",
		Long: `Add TEXT (or standard input when TEXT is omitted) at the end of the file at
PATH, creating it when it is missing. Nothing is added between the file and
TEXT: end the previous text with a newline to start a new line. The append
is atomic and one commit.

Prints nothing; with --json, {"path": ..., "appended": N} (N bytes).`,
		Example: `  satchel fs append log.md "- done"$'\n'
  echo "- next step" | satchel fs append notes/plan.md`,
		Args: argsBetween([]string{"PATH"}, "TEXT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			l, err := ws.Limits(ctx)
			if err != nil {
				return err
			}
			text, err := a.input(args, 1, l.MaxFileBytes, "the per-file limit")
			if err != nil {
				return err
			}
			if err := ws.Append(ctx, args[0], text, kf.opts()...); err != nil {
				return err
			}
			return a.emit(appendResult{Path: args[0], Appended: len(text)}, nil)
		},
	}
	kf = addKeyFlag(cmd)
	return cmd
}

// editResult is what `fs edit --json` prints.
type editResult struct {
	Replaced  int  `json:"replaced"`
	Unchanged bool `json:"unchanged,omitempty"`
}

func newFSEditCmd(a *app) *cobra.Command {
	var (
		oldText, newText, ifHash string
		all                      bool
		kf                       *keyFlag
	)
	cmd := &cobra.Command{
		Use:   "edit PATH --old TEXT --new TEXT",
		Short: "Replace text in a file (str_replace)",
		Long: `Replace the text --old with --new in the file at PATH, as one commit.
Without --all, --old must occur exactly once: an absent or an ambiguous
anchor is refused, and nothing changes. --new may be empty (to delete).

--if-hash H edits only if the file's content hash is still H.

Prints the number of occurrences replaced, followed by a newline; with
--json, {"replaced": N}. A replacement that leaves the file as it was
makes no commit and prints "unchanged: ..." ("unchanged": true).`,
		Example: `  satchel fs edit notes/a.md --old "status: draft" --new "status: final"
  satchel fs edit src/app.go --old oldName --new newName --all`,
		Args: exactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			opts := kf.opts()
			if cmd.Flags().Changed("if-hash") {
				opts = append(opts, satchel.IfHash(ifHash))
			}
			var c satchel.Commit
			n, err := ws.StrReplace(ctx, args[0], oldText, newText, all, append(opts, satchel.Committed(&c))...)
			if err != nil {
				return err
			}
			if c.Unchanged {
				return a.emit(editResult{Replaced: n, Unchanged: true}, text("unchanged: the replacement leaves "+args[0]+" as it was\n"))
			}
			return a.emit(editResult{Replaced: n}, func(w io.Writer) error {
				return text(itoa(n) + "\n")(w)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&oldText, "old", "", "the text to replace (the anchor)")
	f.StringVar(&newText, "new", "", "the replacement text")
	f.BoolVar(&all, "all", false, "replace every occurrence instead of exactly one")
	f.StringVar(&ifHash, "if-hash", "", "edit only if the file's content hash is still `H`")
	kf = addKeyFlag(cmd)
	_ = cmd.MarkFlagRequired("old")
	_ = cmd.MarkFlagRequired("new")
	return cmd
}
