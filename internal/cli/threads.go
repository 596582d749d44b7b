package cli

import "github.com/spf13/cobra"

func newThreadsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "threads",
		GroupID: groupVersions,
		Short:   "List the threads of a scope",
		Long: `List the threads of --scope, one name a line.

With --json, an array of threads: [{"name": ..., "created": TIME,
"head": SEQ, "head_time": TIME}] ([] when none).`,
		Example: `  satchel threads
  satchel threads --scope acme --json
  satchel threads rm experiment`,
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
			names := make([]string, len(ts))
			for i, t := range ts {
				names[i] = t.Name
			}
			return a.emit(nonEmpty(ts), lines(names))
		},
	}
	cmd.AddCommand(newThreadsRmCmd(a))
	return cmd
}

// threadsRmResult is what `threads rm --json` prints.
type threadsRmResult struct {
	Removed string `json:"removed"`
}

func newThreadsRmCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Delete a thread",
		Long: `Delete the thread NAME of --scope: its log, checkpoints and settings.
Its storage is reclaimed by the next gc (forks may still share it).
A thread that does not exist is refused.

Prints nothing; with --json, {"removed": NAME}.`,
		Example: `  satchel threads rm experiment`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			if err := s.DeleteThread(ctx, a.scope, args[0]); err != nil {
				return err
			}
			return a.emit(threadsRmResult{Removed: args[0]}, nil)
		},
	}
}
