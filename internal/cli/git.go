package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel/gitrepo"
)

func newGitCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "git",
		GroupID: groupVersions,
		Short:   "Export a thread as a git repository, or import one as a thread",
		Long: `Every thread is a git repository (docs/git.md): each retained commit one git
commit, with the same hashes on every backend and after export and import.
satchel serve --http ADDR --git serves them to git itself; these commands
write and read repositories on disk.`,
		Example: `  satchel --thread main git export /tmp/main-repo
  satchel --thread imported git import ./repo`,
	}
	cmd.AddCommand(newGitExportCmd(a), newGitImportCmd(a))
	return cmd
}

func newGitExportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "export [--thread T] DIR",
		Short: "Write a thread (or the whole scope) as a git repository",
		Long: `Export writes the git repository of thread --thread, or without --thread of
the whole scope (every thread a branch, checkpoints as tags THREAD/NAME), to
DIR, a new or empty directory: the same commits, with the same hashes, as
satchel serve --git serves, and the work tree checked out at HEAD. Prints
each reference written; with --json, the result.`,
		Example: `  satchel --thread main git export /tmp/main-repo
  satchel git export /tmp/scope-repo && git -C /tmp/scope-repo branch -a`,
		Args: exactArgs("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			thread := ""
			if a.root != nil && a.root.PersistentFlags().Changed("thread") {
				thread = a.thread
			}
			res, err := gitrepo.Export(ctx, st, a.scope, thread, args[0])
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) error {
				for name, h := range res.Refs {
					fmt.Fprintf(w, "%s %s\n", h, name)
				}
				if len(res.Refs) == 0 {
					fmt.Fprintln(w, "exported an empty repository (the thread has no commits)")
				}
				return nil
			})
		},
	}
}

func newGitImportCmd(a *app) *cobra.Command {
	var branch string
	cmd := &cobra.Command{
		Use:   "import REPO [--branch B] --thread T",
		Short: "Make a new thread of a git repository's first-parent history",
		Long: `Import turns the first-parent history of branch --branch (default: HEAD) of
the git repository REPO (a directory) into the commits of thread --thread,
which must not exist yet: each git commit one commit with the same files,
its summary the commit's subject, its git commit (author, committer,
message) kept in its metadata, so that the thread is served and exported
with the same hashes. Only files of mode 100644 and 100755 are taken (a
symbolic link or submodule is refused, naming its path); a git commit that
changes no file makes no commit and is counted as skipped.`,
		Example: `  satchel --thread imported git import ./repo
  satchel git import ./repo --branch dev --thread dev`,
		Args: exactArgs("REPO"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if a.root == nil || !a.root.PersistentFlags().Changed("thread") {
				return usagef("satchel git import needs --thread T: the new thread to make")
			}
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := gitrepo.Import(ctx, st, args[0], branch, a.scope, a.thread, a.actor())
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) error {
				fmt.Fprintf(w, "imported %d commits into thread %s", res.Commits, res.Thread)
				if res.Skipped > 0 {
					fmt.Fprintf(w, " (%d commits that changed no file skipped)", res.Skipped)
				}
				fmt.Fprintln(w)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&branch, "branch", "", "branch `B` to import (default: HEAD)")
	return cmd
}
