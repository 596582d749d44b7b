package cli

import (
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
)

// shFlags are the flags of satchel sh.
type shFlags struct {
	command     string
	atomic      bool
	timeout     time.Duration
	maxOutput   string
	maxMemory   string
	maxCommands int64
}

func newShCmd(a *app) *cobra.Command {
	var f shFlags
	cmd := &cobra.Command{
		Use:     "sh (-c SCRIPT | SCRIPT.sh)",
		GroupID: groupFiles,
		Short:   "Run a shell script over the workspace's files, as one commit",
		Long: `Sh runs a POSIX shell or bash script (pipes, redirects, && and ||, loops,
functions, variables, globs, here-documents, $(...)) over the files of the
workspace of --scope and --thread. No host file, process, environment
variable or network is reachable: / is the workspace's root, and the
commands are satchel's own, written in Go:

  ` + strings.Join(satchel.ShellCommands(), " ") + `

besides the shell's builtins (echo, printf, test, [, true, false, cd, pwd,
read, set, export, local, eval, ...). Anything else fails with
"sh: NAME: command not found", exit 127. See docs/shell.md for each
command's flags and every difference from GNU's.

The script is -c SCRIPT, or the host file SCRIPT.sh; its standard input is
satchel's. What it prints goes to standard output and standard error, and
satchel exits with the script's exit status. A run that changed files
makes one commit, "sh: " and the script's first line; one that changed
nothing makes none. With --atomic the run works on a fork and publishes by
compare-and-swap: if the thread moved meanwhile, nothing is published.

A run is bounded by --timeout, --max-output (standard output and error
together), --max-memory (what the run's pending writes and any command
hold) and --max-commands; past one, the run stops with an error, exit 1,
and nothing is committed. With --json, one value: {"stdout", "stderr",
"exit_status", "commit"}.`,
		Example: `  satchel sh -c 'grep -rn TODO . | wc -l'
  satchel sh -c 'sed -i s/colour/color/g docs/*.md'
  satchel --thread draft sh --atomic fix.sh < input.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case cmd.Flags().Changed("command") && len(args) > 0:
				return usagef("%s: give -c SCRIPT or SCRIPT.sh, not both", cmd.CommandPath())
			case !cmd.Flags().Changed("command") && len(args) != 1:
				return usagef("%s: missing -c SCRIPT or SCRIPT.sh", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSh(cmd, a, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.command, "command", "c", "", "run `SCRIPT`, given as text")
	fl.BoolVar(&f.atomic, "atomic", false, "run on a fork and publish by compare-and-swap")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "longest the run may take")
	fl.StringVar(&f.maxOutput, "max-output", "1MiB", "most standard output and error the run may write")
	fl.StringVar(&f.maxMemory, "max-memory", "256MiB", "most bytes the run's pending writes, and any one command, may hold")
	fl.Int64Var(&f.maxCommands, "max-commands", 1_000_000, "most commands the run may run")
	return cmd
}

func runSh(cmd *cobra.Command, a *app, f *shFlags, args []string) error {
	ctx := cmd.Context()
	maxOutput, err := parseSize(f.maxOutput)
	if err != nil {
		return usagef("--max-output: %v", err)
	}
	maxMemory, err := parseSize(f.maxMemory)
	if err != nil {
		return usagef("--max-memory: %v", err)
	}
	if f.timeout <= 0 || f.maxCommands <= 0 {
		return usagef("--timeout and --max-commands must be positive")
	}
	script := f.command
	if len(args) == 1 {
		if script, err = bounded.ReadFile(args[0], 1<<20, "the script limit (1 MiB)"); err != nil {
			return unwrapPath(err)
		}
	}
	ws, err := a.workspace(ctx)
	if err != nil {
		return err
	}
	res, err := ws.Shell(ctx, script, satchel.ShellOptions{
		Stdin: a.stdin, Timeout: f.timeout, MaxOutput: maxOutput, MaxMemory: maxMemory,
		MaxCommands: f.maxCommands, Atomic: f.atomic,
	})
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(res); err != nil {
			return err
		}
	} else {
		if _, err := io.WriteString(a.stdout, res.Stdout); err != nil {
			return err
		}
		if _, err := io.WriteString(a.stderr, res.Stderr); err != nil {
			return err
		}
	}
	if res.ExitStatus != 0 {
		return exitStatus{res.ExitStatus}
	}
	return nil
}
