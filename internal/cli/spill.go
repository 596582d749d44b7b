package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel/spill"
)

// Spill backends, as --backend names them.
const (
	spillFS        = "fs"
	spillWorkspace = "workspace"
)

func newSpillCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("spill", "Save large outputs aside and read them back",
		`A spill saves a large tool output and gives back a locator and a hint that
says how to read it back (DESIGN §4).

The fs backend (the default) writes files on this host, below --root
(default: satchel-spill in the user's cache directory), as
<root>/session-<sha256(owner)>/<random>-<name>, directories 0700 and files
0600. The workspace backend writes files "spill/<random>-<name>" into the
workspace of --db, --scope and --thread, where an agent's read_file reaches
them. There is no automatic cleanup: prune removes old fs spills.`,
		`  make test 2>&1 | satchel spill save --owner ci-42 --name test.log
  satchel spill fetch /home/me/.cache/satchel-spill/session-.../Xb9...-test.log
  satchel spill prune --older-than 168h`)
	cmd.GroupID = groupTools
	cmd.AddCommand(newSpillSaveCmd(a), newSpillFetchCmd(a), newSpillPruneCmd(a))
	return cmd
}

// spillFlags are the flags that choose a spill backend.
type spillFlags struct{ root, backend string }

func (f *spillFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.backend, "backend", spillFS, "where spills are: `fs` (host files) or workspace")
	cmd.Flags().StringVar(&f.root, "root", "", "root `DIR` of the fs backend (default: satchel-spill in the user's cache directory)")
}

// open returns the backend the flags name.
func (f *spillFlags) open(ctx context.Context, a *app, cmd *cobra.Command) (spill.Backend, error) {
	switch f.backend {
	case spillFS:
		return spill.NewFS(f.root), nil
	case spillWorkspace:
		if cmd.Flags().Changed("root") {
			return nil, usagef("--root applies only to --backend fs")
		}
		ws, err := a.workspace(ctx)
		if err != nil {
			return nil, err
		}
		return spill.NewWorkspace(
			func(ctx context.Context, path, content string) error { return ws.SaveSpill(ctx, path, content) },
			func(ctx context.Context, path string) (string, error) { return ws.Read(ctx, path) },
		), nil
	}
	return nil, usagef("--backend must be fs or workspace, was %q", f.backend)
}

// spillSaved is what `spill save --json` prints.
type spillSaved struct {
	Locator string `json:"locator"`
	Hint    string `json:"hint"`
}

func newSpillSaveCmd(a *app) *cobra.Command {
	var (
		owner, name string
		sf          spillFlags
	)
	cmd := &cobra.Command{
		Use:   "save --owner O --name N",
		Short: "Save standard input as a spill",
		Long: `Save standard input as a spill, named after --name (made safe for a file
name), for --owner (the session it belongs to; hashed, never used raw;
required by the fs backend, unused by the workspace backend, whose owner
is the thread).

Prints the locator, then the hint, each on its own line: the hint names the
file's full path and the tool that reads it. With --json,
{"locator": ..., "hint": ...}.`,
		Example: `  go test ./... 2>&1 | satchel spill save --owner ci-42 --name test.log
  cat big.json | satchel spill save --name big.json --backend workspace`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if sf.backend == spillFS && !cmd.Flags().Changed("owner") {
				return usagef("spill save: --owner is required with --backend fs")
			}
			b, err := sf.open(ctx, a, cmd)
			if err != nil {
				return err
			}
			loc, hint, err := spill.SaveFromReader(ctx, b, owner, name, a.stdin)
			if err != nil {
				return err
			}
			return a.emit(spillSaved{Locator: loc.String(), Hint: hint}, text(loc.String()+"\n"+hint+"\n"))
		},
	}
	cmd.Flags().StringVar(&owner, "owner", "", "the session `O` the spill belongs to")
	cmd.Flags().StringVar(&name, "name", "", "a name `N` for the spill file (default result.txt)")
	sf.add(cmd)
	return cmd
}

// spillFetched is what `spill fetch --json` prints.
type spillFetched struct {
	Text string `json:"text"`
}

func newSpillFetchCmd(a *app) *cobra.Command {
	var sf spillFlags
	cmd := &cobra.Command{
		Use:   "fetch LOCATOR",
		Short: "Print a spill",
		Long: `Print the spill at LOCATOR byte for byte, adding nothing. The fs backend
opens only locators within its --root; the workspace backend, only
"spill/..." files of the workspace.

With --json, {"text": ...}.`,
		Example: `  satchel spill fetch /home/me/.cache/satchel-spill/session-.../Xb9...-test.log
  satchel spill fetch spill/Xb9...-big.json --backend workspace`,
		Args: exactArgs("LOCATOR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			b, err := sf.open(ctx, a, cmd)
			if err != nil {
				return err
			}
			loc := spill.Locator(args[0])
			if a.json {
				s, err := b.Fetch(ctx, loc)
				if err != nil {
					return err
				}
				return a.printJSON(spillFetched{Text: s})
			}
			return spill.FetchTo(ctx, b, loc, a.stdout)
		},
	}
	sf.add(cmd)
	return cmd
}

// spillPruned is what `spill prune --json` prints.
type spillPruned struct {
	Removed int `json:"removed"`
}

func newSpillPruneCmd(a *app) *cobra.Command {
	var (
		root      string
		olderThan time.Duration
	)
	cmd := &cobra.Command{
		Use:   "prune --older-than DUR",
		Short: "Delete old filesystem spills",
		Long: `Delete the spill files below --root last modified more than --older-than
ago (0s: all of them), and the session directories left empty. Only what
has the layout spill save writes is touched; symbolic links are never
followed. Spills of the workspace backend are files of their thread:
delete them with fs rm, or let the thread's retention drop them.

Prints "removed N files"; with --json, {"removed": N}.`,
		Example: `  satchel spill prune --older-than 168h
  satchel spill prune --older-than 0s --root /var/tmp/agent-spill`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := spill.Prune(root, olderThan)
			if err != nil {
				return err
			}
			return a.emit(spillPruned{Removed: n}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "removed %d files\n", n)
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "delete spills last modified more than `DUR` ago")
	cmd.Flags().StringVar(&root, "root", "", "root `DIR` of the fs backend (default: satchel-spill in the user's cache directory)")
	_ = cmd.MarkFlagRequired("older-than")
	return cmd
}
