package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newThreadsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "threads",
		GroupID: groupVersions,
		Short:   "List the threads of a scope",
		Long: `List the threads of --scope, one name a line; an archived thread's name
is followed by " (archived)".

With --json, an array of threads: [{"name": ..., "created": TIME,
"head": SEQ, "head_time": TIME, "archived": true}] ([] when none;
"archived" only for an archived thread).`,
		Example: `  satchel threads
  satchel threads --scope acme --json
  satchel threads rm experiment
  satchel threads archive experiment`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			ts, err := s.Threads(ctx, a.scope)
			if err != nil {
				return err
			}
			return a.emit(nonEmpty(ts), threadLines(ts))
		},
	}
	cmd.AddCommand(newThreadsRmCmd(a), newThreadsArchiveCmd(a, true), newThreadsArchiveCmd(a, false))
	return cmd
}

// threadsRmResult is what `threads rm --json` prints.
type threadsRmResult struct {
	Removed string `json:"removed"`
	Head    int64  `json:"head"`
}

func newThreadsRmCmd(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "rm NAME --yes",
		Short: "Delete a thread",
		Long: `Delete the thread NAME of --scope (archived or not): its log, checkpoints,
settings and spill area. Its storage is reclaimed by the next gc (forks
may still share it).
A thread that does not exist is refused. Deleting cannot be undone, so it
asks for --yes, or for a confirmation when standard input is a terminal.

Prints what it removed; with --json, {"removed": NAME, "head": SEQ}.`,
		Example: `  satchel threads rm experiment --yes`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			if err := s.CheckThread(ctx, a.scope, args[0]); err != nil {
				return err
			}
			var head int64
			if ts, err := s.Threads(ctx, a.scope); err == nil {
				for _, t := range ts {
					if t.Name == args[0] {
						head = t.Head
					}
				}
			}
			what := fmt.Sprintf("thread %s of scope %s (head at commit %d), its history and checkpoints", args[0], a.scope, head)
			if !yes {
				ok, err := a.confirm("delete " + what + "?")
				if err != nil {
					return err
				}
				if !ok {
					return refuse("not deleted: threads rm deletes %s for good; give --yes", what)
				}
			}
			if err := s.DeleteThread(ctx, a.scope, args[0]); err != nil {
				return err
			}
			return a.emit(threadsRmResult{Removed: args[0], Head: head}, text("removed "+what+"\n"))
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

// confirm asks question on a terminal and reports whether the answer was
// yes; without a terminal on both standard input and error it is false.
func (a *app) confirm(question string) (bool, error) {
	in, ok := a.stdin.(*os.File)
	errf, ok2 := a.stderr.(*os.File)
	if !ok || !ok2 || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(errf.Fd())) {
		return false, nil
	}
	fmt.Fprintf(errf, "%s [y/N] ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes", nil
}
