package cli

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// maxCompletions bounds what a completion reads from the store: a shell
// waits for it.
const maxCompletions = 5000

// addCompletions lists cobra's completion command in the help (satchel
// completion bash|zsh|fish|powershell) and makes the shells complete
// workspace paths, directories, commit references (checkpoint names and
// head) and thread names from the database the command line names.
func addCompletions(a *app, root *cobra.Command) {
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetCompletionCommandGroupID(groupAdmin)

	paths, dirs, refs, threads := a.completePaths(false), a.completePaths(true), a.completeRefs, a.completeThreads
	byArg := map[string][]cobra.CompletionFunc{
		"fs read": {paths}, "fs stat": {paths}, "fs exists": {paths}, "fs rm": {paths},
		"fs edit": {paths}, "fs append": {paths}, "fs write": {paths}, "fs mv": {paths, paths},
		"fs ls": {dirs}, "fs export": {nil}, "fs import": {nil},
		"diff": {refs, refs, paths}, "restore": {refs}, "threads rm": {threads},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if fns, ok := byArg[name]; ok {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) >= len(fns) {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				if fns[len(args)] == nil {
					return nil, cobra.ShellCompDirectiveFilterDirs // a directory of the host
				}
				return fns[len(args)](cmd, args, toComplete)
			}
		}
		if c.Flags().Lookup("at") != nil {
			_ = c.RegisterFlagCompletionFunc("at", refs)
		}
		if name == "fork" && c.Flags().Lookup("from") != nil {
			_ = c.RegisterFlagCompletionFunc("from", threads)
		}
		if name == "import" && c.Flags().Lookup("tokens") != nil {
			_ = c.RegisterFlagCompletionFunc("tokens", cobra.FixedCompletions([]cobra.Completion{"safe", "all", "none"}, cobra.ShellCompDirectiveNoFileComp))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	_ = root.RegisterFlagCompletionFunc("thread", threads)
}

// completionWorkspace is the workspace completions read, or nil when the
// database does not exist: pressing tab must not create a database.
func (a *app) completionWorkspace(ctx context.Context) *satchel.Workspace {
	if !a.databaseExists() {
		return nil
	}
	ws, err := a.workspace(ctx)
	if err != nil {
		return nil
	}
	return ws
}

// databaseExists says whether the database to open is there: a SQLite
// file that exists, or memory: or a URL (which it cannot tell).
func (a *app) databaseExists() bool {
	dsn, err := a.dsn()
	if err != nil {
		return false
	}
	if isURLDSN(dsn) {
		return true
	}
	_, err = os.Stat(strings.TrimPrefix(dsn, "file:"))
	return err == nil
}

func completionContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// completePaths completes the workspace's paths one segment at a time:
// the files and directories (with a trailing /) that toComplete begins;
// with dirsOnly, the directories.
func (a *app) completePaths(dirsOnly bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx := completionContext(cmd)
		ws := a.completionWorkspace(ctx)
		if ws == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		under := ""
		if i := strings.LastIndexByte(toComplete, '/'); i > 0 {
			under = toComplete[:i]
		}
		files, err := ws.List(ctx, under, satchel.ListOptions{Limit: maxCompletions})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		var out []cobra.Completion
		directive := cobra.ShellCompDirectiveNoFileComp
		for _, p := range files {
			rest, ok := strings.CutPrefix(p, toComplete)
			if !ok {
				continue
			}
			c := p
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				c = toComplete + rest[:i+1]
				directive |= cobra.ShellCompDirectiveNoSpace // the path goes on
			} else if dirsOnly {
				continue
			}
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		return out, directive
	}
}

// completeRefs completes commit references: head and the checkpoint
// names of the thread's retained commits, newest first.
func (a *app) completeRefs(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx := completionContext(cmd)
	ws := a.completionWorkspace(ctx)
	if ws == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := []cobra.Completion{}
	if strings.HasPrefix("head", toComplete) {
		out = append(out, "head")
	}
	cs, err := ws.History(ctx, 0, maxCompletions)
	if err != nil {
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	for _, c := range cs {
		for _, name := range c.Checkpoints {
			if strings.HasPrefix(name, toComplete) {
				out = append(out, name)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeThreads completes the thread names of --scope.
func (a *app) completeThreads(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx := completionContext(cmd)
	if !a.databaseExists() {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	st, err := a.open(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ts, err := st.Threads(ctx, a.scope)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, t := range ts {
		if strings.HasPrefix(t.Name, toComplete) {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}
