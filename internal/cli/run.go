package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
	"github.com/satchel-dev/satchel/luahost"
)

// runFlags are the flags of satchel run.
type runFlags struct {
	dir, agent                       string
	inputFile, inputText, outputFile string
	dump                             string
	atomic                           bool
	timeout                          time.Duration
	maxMemory                        string
	fanoutMax                        int
}

func newRunCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:     "run SCRIPT.lua [ARGS...]",
		GroupID: groupServe,
		Short:   "Run a Lua agent script against a workspace",
		Long: `Run runs a Lua 5.1 script with the globals store (write, append, read,
read_numbered, str_replace, glob, exists, delete), docs (the collections of
--dir, as --agent), untrusted, fanout, args (the arguments joined by
spaces), arg (them as a table) and print (to standard output). Only the
base, table, string and math libraries are open.

The store is the workspace of --scope and --thread in the database every
command uses (--db, else $SATCHEL_DB, else the project's satchel.json,
else ./satchel.db); --db memory: gives a throwaway store, gone when the
run ends. With --atomic the script runs on a fork of the thread, and its
commits reach the thread only if it succeeds, in one compare-and-swap.

Prints the declared output (or nothing when there is none) after what the
script prints. With --json, one value as run_script's: {"output": TEXT,
"printed": TEXT, "commits": [...]} ("output" left out when the script
declares none or with --output-file; "published" added with --atomic).

A script may declare, in a --[[ ... ]] block comment opening its first
line, YAML with name, description, input and output. --input-file or
--input-text write the input at the declared input path before the run;
the declared output is printed after it, or written to --output-file.

A run is bounded by --timeout and --max-memory; an error stops it with
the script's file and line, and exits 1. See docs/lua.md.`,
		Example: `  satchel --db memory: run examples/lua/seed.lua first run
  satchel run summarize.lua --input-file notes.md --output-file summary.md
  satchel --db team.db --thread draft run --atomic edit.lua`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s: missing SCRIPT.lua", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScript(cmd, a, &f, args[0], args[1:])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "project `DIR` whose stores/ and agents/ docs serves (default: . when it has them)")
	fl.StringVar(&f.agent, "agent", "", "the agent whose access docs has (default: an operator)")
	fl.StringVar(&f.inputFile, "input-file", "", "write host file `F` at the script's declared input path")
	fl.StringVar(&f.inputText, "input-text", "", "write `TEXT` at the script's declared input path")
	fl.StringVar(&f.outputFile, "output-file", "", "write the declared output to host file `F` instead of standard output")
	fl.StringVar(&f.dump, "dump", "", "write every file of the store under host directory `DIR` at the end")
	fl.BoolVar(&f.atomic, "atomic", false, "run on a fork and publish the commits only if the script succeeds")
	fl.DurationVar(&f.timeout, "timeout", luahost.DefaultTimeout, "longest the run may take")
	fl.StringVar(&f.maxMemory, "max-memory", "256MiB", "most memory the run may take (e.g. 64MiB, 1GiB)")
	fl.IntVar(&f.fanoutMax, "fanout-max", luahost.DefaultFanoutMax, "most arms of one fanout that run at once")
	return cmd
}

func runScript(cmd *cobra.Command, a *app, f *runFlags, path string, args []string) error {
	ctx := cmd.Context()
	maxMemory, err := parseSize(f.maxMemory)
	if err != nil {
		return usagef("--max-memory: %v", err)
	}
	if f.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if f.fanoutMax < 1 {
		return usagef("--fanout-max must be at least 1")
	}
	script, err := luahost.Load(path)
	if err != nil {
		return err
	}
	in := luahost.InputSource{
		File: f.inputFile, HasFile: cmd.Flags().Changed("input-file"),
		Text: f.inputText, HasText: cmd.Flags().Changed("input-text"),
		FileName: "--input-file", TextName: "--input-text",
		Read: func(name string) (string, error) {
			b, err := bounded.ReadFile(name, satchel.DefaultMaxFileBytes, "the per-file limit")
			return b, unwrapPath(err)
		},
	}
	input, err := script.ResolveInput(in)
	if err != nil {
		return err
	}
	st, err := a.open(ctx)
	if err != nil {
		return err
	}
	var project *satchel.Project
	if dir := projectDir(cmd, f.dir); dir != "" {
		if project, err = satchel.LoadProject(dir); err != nil {
			return err
		}
	}
	// With --json, what the script prints is kept (its first MiB) for the
	// result instead of going to standard output.
	stdout := a.stdout
	printed := &capped{max: 1 << 20}
	if a.json {
		stdout = printed
	}
	res, runErr := script.Run(ctx, luahost.Config{
		Store: st, Scope: a.scope, Thread: a.thread,
		Actor:   satchel.Actor{Agent: f.agent, Via: "cli:run " + script.Name},
		Project: project, Agent: f.agent,
		Args: args, Input: input, Stdout: stdout,
		Timeout: f.timeout, MaxMemory: maxMemory, FanoutMax: f.fanoutMax,
		Atomic: f.atomic,
		Review: reviewKey(project, f.agent),
	})
	if f.dump != "" {
		if err := a.dumpWorkspace(ctx, f.dump); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return runErr
	}
	if res.Produced && f.outputFile != "" {
		if err := os.WriteFile(f.outputFile, []byte(res.Output), 0o644); err != nil {
			return err
		}
	}
	for _, n := range res.Notices {
		a.notice("%s", n)
	}
	if a.json {
		r := runJSON{Printed: printed.b.String(), Commits: nonEmpty(res.Commits), Published: res.Published, Notices: res.Notices}
		if res.Produced && f.outputFile == "" {
			r.Output = &res.Output
		}
		return a.printJSON(r)
	}
	if !res.Produced || f.outputFile != "" {
		return nil
	}
	_, err = io.WriteString(a.stdout, res.Output)
	return err
}

// runJSON is satchel run's result with --json, as run_script's: the
// declared output (left out when the script declares none, or with
// --output-file), what the script printed, and the commits it made
// (with --atomic, those on its fork, each naming it as "fork", then the
// one that published them).
type runJSON struct {
	Output    *string          `json:"output,omitempty"`
	Printed   string           `json:"printed"`
	Commits   []luahost.Commit `json:"commits"`
	Published *satchel.Commit  `json:"published,omitempty"`
	Notices   []string         `json:"notices,omitempty"`
}

// reviewKey is the review key of a run of agent (a review of its own),
// when its agent.json says "review": true; "" otherwise.
func reviewKey(p *satchel.Project, agent string) string {
	if agent == "" || !p.ReviewAgent(agent) {
		return ""
	}
	return "cli:run-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	b   strings.Builder
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// dumpWorkspace writes every file of the workspace under dir, replacing
// files of the same names; a path never leads outside dir.
func (a *app) dumpWorkspace(ctx context.Context, dir string) error {
	ws, err := a.workspace(ctx)
	if err != nil {
		return err
	}
	paths, err := ws.List(ctx, "", satchel.ListOptions{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		name := filepath.FromSlash(p)
		if !filepath.IsLocal(name) {
			return refuse("cannot dump %q: not a path inside %s", p, dir)
		}
		content, err := ws.Read(ctx, p)
		if err != nil {
			return err
		}
		if err := writeIn(root, name, content); err != nil {
			return fmt.Errorf("cannot dump %s into %s: %w", p, dir, err)
		}
	}
	return nil
}

// unwrapPath drops an *os.PathError's repetition of the path.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// parseSize reads a size in bytes: a number, optionally followed by KiB,
// MiB, GiB (or K, M, G, KB, MB, GB, all powers of 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (a positive number of bytes, or with KiB, MiB or GiB)", s)
	}
	return n * mult, nil
}
