package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/mcpserver"
)

// Bounds of run_shell under satchel serve --shell: the server holds at
// most shellMaxRuns runs at once, each within shellMaxMemory, so that the
// runs together stay well inside the server's memory bound.
const (
	shellMaxRuns   = 2
	shellMaxMemory = 32 << 20
)

const runShellDesc = `Run a POSIX shell or bash script over the files of your workspace: pipes, redirects, && and ||, loops, functions, variables, globs, here-documents, $(...). / is the workspace's root; no host file, process, network or environment variable is reachable. The commands: %s, besides the shell's builtins (echo, printf, test, [, true, false, cd, pwd, read, ...); anything else exits 127 with "command not found". Regular expressions are RE2 (no backreferences). The result is the script's stdout, stderr and exit status, and the commit it made: a run that changed files is one commit ("sh: " and the script's first line); one that changed nothing makes none. With atomic, the run works on a fork and publishes by compare-and-swap: if your thread changed meanwhile, nothing is published. A run is bounded: 30 s, 1 MiB of output, %s of pending writes or of one command's input, 1,000,000 commands; past a bound it stops with an error and commits nothing.`

const runShellInput = `{"type": "object", "properties": {
  "script": {"type": "string", "description": "The script, e.g. grep -rn TODO . | head -20"},
  "atomic": {"type": "boolean", "description": "Run on a fork of your thread and publish the changes only if the thread did not move meanwhile (all or nothing)."}},
 "required": ["script"], "additionalProperties": false}`

const runShellOutput = `{"type": "object", "properties": {
  "stdout": {"type": "string"}, "stderr": {"type": "string"},
  "exit_status": {"type": "integer"},
  "commit": {"type": "object", "description": "the commit the run made; absent when it changed nothing"},
  "spilled": {"type": "object", "description": "set instead when the result was saved as a file"}}}`

// shellTool is run_shell: Workspace.Shell for the caller's workspace.
func shellTool(st *satchel.Store) mcpserver.CustomTool {
	slots := make(chan struct{}, shellMaxRuns)
	return mcpserver.CustomTool{
		Tool: mcpserver.Tool{Name: "run_shell", Title: "Run a shell script over the workspace",
			Description: fmt.Sprintf(runShellDesc, strings.Join(satchel.ShellCommands(), ", "), "32 MiB"),
			InputSchema: json.RawMessage(runShellInput), OutputSchema: json.RawMessage(runShellOutput), Destructive: true},
		Call: func(ctx context.Context, id mcpserver.Identity, raw json.RawMessage) (string, any, error) {
			var a struct {
				Script *string `json:"script"`
				Atomic bool    `json:"atomic"`
			}
			if err := strictJSON(raw, &a); err != nil {
				return "", nil, err
			}
			if a.Script == nil {
				return "", nil, refuse("run_shell: script is required")
			}
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			default:
				return "", nil, refusef(satchel.ErrLimitExceeded, "run_shell: %d runs are under way on this server; try again when one has ended", shellMaxRuns)
			}
			// The caller's thread binding, review and file rules, as in
			// every tool of the session.
			ws, err := mcpserver.CallWorkspace(ctx)
			if err != nil {
				return "", nil, err
			}
			res, err := ws.Shell(ctx, *a.Script, satchel.ShellOptions{Atomic: a.Atomic, MaxMemory: shellMaxMemory})
			if err != nil {
				return "", nil, err
			}
			return shellText(res), res, nil
		},
	}
}

// shellText is run_shell's text: stdout, then stderr and the exit status
// when there is something to say, then the commit.
func shellText(res *satchel.ShellResult) string {
	var b strings.Builder
	b.WriteString(res.Stdout)
	if res.Stderr != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString("[stderr]\n" + res.Stderr)
	}
	if res.ExitStatus != 0 || res.Commit != nil || b.Len() == 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[exit status %d", res.ExitStatus)
		if res.Commit != nil {
			fmt.Fprintf(&b, "; commit %d: %s", res.Commit.Seq, res.Commit.Summary)
		}
		b.WriteString("]\n")
	}
	return b.String()
}
