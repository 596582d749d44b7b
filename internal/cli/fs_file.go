package cli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func itoa[T ~int | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }

func newFSStatCmd(a *app) *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "stat PATH",
		Short: "Show a file's type, size, lines, modification time and hash",
		Long: `Show the type, the size in bytes, the number of lines, the modification
time and the content hash of the file at PATH (at the head, or at commit
--at REF). The type is sniffed from the content: text/plain;
charset=utf-8 for text, else image/png, application/octet-stream, ...;
only text has lines. The hash is what --if-hash expects.

Plain output is "key: value" lines, as stat_file gives them: path, size,
lines (text only), modified (RFC 3339, UTC), hash and type. With --json, the
FileInfo: {"path": ..., "size": N, "lines": N, "modified": TIME, "hash":
..., "type": ...}.`,
		Example: `  satchel fs stat notes/a.md
  satchel fs stat notes/a.md --at draft-1 --json`,
		Args: exactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			fi, err := r.Stat(ctx, args[0])
			if err != nil {
				return err
			}
			return a.emit(fi, func(w io.Writer) error {
				lines := ""
				if fi.Type == satchel.TypeText {
					lines = fmt.Sprintf("lines: %d\n", fi.Lines) // a PNG has no lines
				}
				_, err := fmt.Fprintf(w, "path: %s\nsize: %d\n%smodified: %s\nhash: %s\ntype: %s\n",
					fi.Path, fi.Size, lines, stamp(fi.ModTime), fi.Hash, fi.Type)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "read at commit `REF` (a sequence number or a checkpoint name)")
	return cmd
}

// existsResult is what `fs exists --json` prints.
type existsResult struct {
	Exists bool `json:"exists"`
}

func newFSExistsCmd(a *app) *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "exists PATH",
		Short: "Tell whether a file exists",
		Long: `Print true when PATH is a file (at the head, or at commit --at REF), false
otherwise (a directory is not a file). Either way the exit code is 0; an
invalid path is refused (exit 1).

With --json, {"exists": true} or {"exists": false}.`,
		Example: `  satchel fs exists notes/a.md
  if [ "$(satchel fs exists notes/a.md)" = true ]; then ...; fi`,
		Args: exactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			ok, err := r.Exists(ctx, args[0])
			if err != nil {
				return err
			}
			return a.emit(existsResult{Exists: ok}, text(strconv.FormatBool(ok)+"\n"))
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "look at commit `REF` (a sequence number or a checkpoint name)")
	return cmd
}

// rmResult is what `fs rm --json` prints.
type rmResult struct {
	Path string `json:"path"`
}

func newFSRmCmd(a *app) *cobra.Command {
	var ifHash string
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:   "rm PATH",
		Short: "Delete a file",
		Long: `Delete the file at PATH, as one commit. Deleting a file that does not
exist is not an error; a directory is refused. Earlier commits keep it.

--if-hash H deletes only if the file's content hash is still H.

Prints nothing; with --json, {"path": ...}.`,
		Example: `  satchel fs rm notes/old.md`,
		Args:    exactArgs("PATH"),
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
			if err := ws.Delete(ctx, args[0], opts...); err != nil {
				return err
			}
			return a.emit(rmResult{Path: args[0]}, nil)
		},
	}
	cmd.Flags().StringVar(&ifHash, "if-hash", "", "delete only if the file's content hash is still `H`")
	kf = addKeyFlag(cmd)
	return cmd
}

// mvResult is what `fs mv --json` prints.
type mvResult struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func newFSMvCmd(a *app) *cobra.Command {
	var (
		ifHash    string
		overwrite bool
		kf        *keyFlag
	)
	cmd := &cobra.Command{
		Use:   "mv FROM TO",
		Short: "Rename a file",
		Long: `Rename the file FROM to TO, as one commit. An existing TO is refused unless
--overwrite is given. --if-hash H applies to FROM.

Prints nothing; with --json, {"from": ..., "to": ...}.`,
		Example: `  satchel fs mv drafts/a.md notes/a.md
  satchel fs mv new.md current.md --overwrite`,
		Args: exactArgs("FROM", "TO"),
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
			if overwrite {
				opts = append(opts, satchel.Overwrite())
			}
			if err := ws.Move(ctx, args[0], args[1], opts...); err != nil {
				return err
			}
			return a.emit(mvResult{From: args[0], To: args[1]}, nil)
		},
	}
	cmd.Flags().StringVar(&ifHash, "if-hash", "", "move only if FROM's content hash is still `H`")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace TO when it exists")
	kf = addKeyFlag(cmd)
	return cmd
}
