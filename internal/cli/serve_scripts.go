package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
	"github.com/satchel-dev/satchel/mcpserver"
)

// defaultWait is how long run_script waits for a run before it returns
// the run's id for check_run; maxWait bounds wait_s.
const (
	defaultWait = 20 * time.Second
	maxWait     = 300
)

// warmChildren is how many child processes satchel serve keeps started
// for the next runs.
const warmChildren = 2

// scriptTools returns run_script and check_run over the scripts of dir
// (satchel serve --scripts DIR): a run acts as the caller, on the
// caller's scope and thread, with the caller's agent's access to the
// collections.
func scriptTools(st *satchel.Store, project *satchel.Project, dir string, limits luahost.ScriptsLimits, run luahost.Config, log *slog.Logger) ([]mcpserver.CustomTool, func(), error) {
	pool := luahost.NewPool(warmChildren)
	run.Store, run.Project, run.Pool = st, project, pool
	scripts, err := luahost.OpenScripts(dir, run)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	for _, e := range scripts.Skipped() {
		log.Warn("script not read", "entry", e)
	}
	scripts.SetLimits(limits)
	var desc strings.Builder
	desc.WriteString("Run a Lua script of the server's scripts directory against your workspace, with args as its arguments, and return its declared output " +
		"(what it printed and the commits it made are in the structured result). input_text, or input_file (a file of your workspace), " +
		"is written at the script's declared input path first; atomic runs it on a fork and publishes its commits only if it succeeds. " +
		"A run that takes longer than wait_s seconds (default 20, at most 300) goes on: the result then gives the id to pass as check_run's run_id. " +
		"A run ends when your session ends, unless started with detach: true. Each run has a process of its own, under the server's memory and time limits.\nScripts:")
	names := []string{}
	for _, s := range scripts.List() {
		names = append(names, s.File)
		fmt.Fprintf(&desc, "\n- %s", s.File)
		if s.Front.Description != "" {
			fmt.Fprintf(&desc, ": %s", s.Front.Description)
		}
		if in := s.Front.Input; in != nil {
			fmt.Fprintf(&desc, " (input %s", in.Path)
			if in.Description != "" {
				fmt.Fprintf(&desc, ": %s", in.Description)
			}
			desc.WriteString(")")
		}
		if out := s.Front.Output; out != nil {
			fmt.Fprintf(&desc, " (output %s", out.Path)
			if out.Description != "" {
				fmt.Fprintf(&desc, ": %s", out.Description)
			}
			desc.WriteString(")")
		}
	}
	enum, _ := json.Marshal(names)
	runSchema := `{"type": "object", "properties": {
  "script": {"type": "string", "description": "the script's file name", "enum": ` + string(enum) + `},
  "args": {"type": "array", "items": {"type": "string"}, "description": "the script's arguments (args joins them with spaces)"},
  "input_file": {"type": "string", "description": "a file of your workspace to write at the declared input path"},
  "input_text": {"type": "string", "description": "text to write at the declared input path"},
  "atomic": {"type": "boolean", "description": "publish the run's commits only if it succeeds, all at once"},
  "wait_s": {"type": "number", "minimum": 0, "maximum": 300, "description": "seconds to wait before returning a run_id (default 20, at most 300)"},
  "detach": {"type": "boolean", "description": "let the run go on after your session ends (check_run lists it)"}},
 "required": ["script"], "additionalProperties": false}`
	if len(names) == 0 {
		runSchema = strings.Replace(runSchema, `, "enum": []`, "", 1)
	}
	runTool := mcpserver.CustomTool{
		Tool: mcpserver.Tool{Name: "run_script", Title: "Run a script", Description: desc.String(), InputSchema: json.RawMessage(runSchema),
			OutputSchema: json.RawMessage(runOutputSchema), Destructive: true},
		Call: func(ctx context.Context, id mcpserver.Identity, raw json.RawMessage) (string, any, error) {
			var a struct {
				Script    string   `json:"script"`
				Args      []string `json:"args"`
				InputFile *string  `json:"input_file"`
				InputText *string  `json:"input_text"`
				Atomic    bool     `json:"atomic"`
				WaitS     *float64 `json:"wait_s"`
				Detach    bool     `json:"detach"`
			}
			if err := strictJSON(raw, &a); err != nil {
				return "", nil, err
			}
			if a.Script == "" {
				return "", nil, refuse("run_script: script is required")
			}
			wait := defaultWait
			if a.WaitS != nil {
				if *a.WaitS < 0 {
					return "", nil, refuse("wait_s must not be negative, was %v", *a.WaitS)
				}
				if *a.WaitS > maxWait {
					return "", nil, refuse("wait_s must be at most %d, was %v", maxWait, *a.WaitS)
				}
				wait = time.Duration(*a.WaitS * float64(time.Second))
			}
			caller := callerOf(id)
			caller.Review = id.Review || project.ReviewAgent(id.Agent)
			in := luahost.InputSource{
				Read: func(name string) (string, error) {
					opts := append([]satchel.WorkspaceOption{satchel.WorkspaceActor(caller.Actor), satchel.WithFileRules(project.AgentFiles(id.Agent))}, run.Options...)
					ws, err := st.Workspace(ctx, id.Scope, id.Thread, append(opts, caller.Options...)...)
					if err != nil {
						return "", err
					}
					return ws.Read(ctx, name)
				},
			}
			if a.InputFile != nil {
				in.File, in.HasFile = *a.InputFile, true
			}
			if a.InputText != nil {
				in.Text, in.HasText = *a.InputText, true
			}
			req := luahost.StartRequest{Script: a.Script, Args: a.Args, Input: in, Atomic: a.Atomic, Wait: wait, Detach: a.Detach}
			if !a.Detach {
				req.Until = mcpserver.SessionContext(ctx)
			}
			rs, err := scripts.Start(ctx, caller, req)
			if err != nil {
				return "", nil, err
			}
			return runResult(rs)
		},
	}
	checkTool := mcpserver.CustomTool{
		Tool: mcpserver.Tool{Name: "check_run", Title: "Check a run", OutputSchema: json.RawMessage(runOutputSchema), ReadOnly: true, Idempotent: true,
			Description: "The state of a run that run_script started and returned a run_id for: running, or, once done, its result as run_script gives it. " +
				"Without run_id, the list of your runs (detached ones included), newest first.",
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"run_id": {"type": "string"}}, "additionalProperties": false}`)},
		Call: func(ctx context.Context, id mcpserver.Identity, raw json.RawMessage) (string, any, error) {
			var a struct {
				RunID string `json:"run_id"`
			}
			if err := strictJSON(raw, &a); err != nil {
				return "", nil, err
			}
			if a.RunID == "" {
				return runList(scripts.Runs(callerOf(id)))
			}
			rs, err := scripts.State(callerOf(id), a.RunID)
			if err != nil {
				return "", nil, err
			}
			return runResult(rs)
		},
	}
	return []mcpserver.CustomTool{runTool, checkTool}, pool.Close, nil
}

// runList renders the caller's runs for check_run without a run_id: one
// line each, and the states as the structured result.
func runList(runs []luahost.RunState) (string, any, error) {
	if len(runs) == 0 {
		return "no runs", map[string]any{"runs": runs}, nil
	}
	var b strings.Builder
	for _, rs := range runs {
		fmt.Fprintf(&b, "%s %s %s", rs.ID, rs.Script, rs.State)
		if rs.Detached {
			b.WriteString(" (detached)")
		}
		fmt.Fprintf(&b, " started %s\n", rs.Started.Format(time.RFC3339))
	}
	return b.String(), map[string]any{"runs": runs}, nil
}

// runOutputSchema is the structured result of run_script and check_run
// (luahost.RunState); a result too large to send inline is {"spilled":
// ...} instead, so no property is required.
const runOutputSchema = `{"type": "object", "properties": {
  "run_id": {"type": "string"}, "script": {"type": "string"},
  "state": {"type": "string", "enum": ["running", "succeeded", "failed"]},
  "output": {"type": "string", "description": "the declared output"},
  "produced": {"type": "boolean", "description": "whether the script produced its declared output"},
  "printed": {"type": "string", "description": "what the script printed (its first MiB)"},
  "error": {"type": "string"},
  "commits": {"type": "array", "items": {"type": "object"}, "description": "the run's commits, oldest first; when atomic, those made on the run's fork (each names it as fork: their seq numbers are the fork's, not your thread's), then the publish commit"},
  "published": {"type": "object", "description": "an atomic run's publish commit on your thread: the run's work as one commit"},
  "started": {"type": "string", "format": "date-time"}, "ended": {"type": "string", "format": "date-time"},
  "runs": {"type": "array", "items": {"type": "object"}, "description": "check_run without run_id: your runs, newest first"},
  "spilled": {"type": "object", "description": "set instead when the result was saved as a file"}}}`

// callerOf is the caller of a run: the run's commits and document
// changes name the script (Via "lua:SCRIPT", which the run sets) and the
// session's MCP client.
func callerOf(id mcpserver.Identity) luahost.Caller {
	c := luahost.Caller{Scope: id.Scope, Thread: id.Thread, Agent: id.Agent,
		Actor: satchel.Actor{Agent: id.Agent, Credential: id.Credential, Client: id.Client, ClientVersion: id.ClientVersion}}
	// The token's file rules (the agent's apply in every run).
	c.Options = (&mcpserver.Config{}).FileOptions(mcpserver.Identity{Files: id.Files, ReadOnly: id.ReadOnly})
	c.ReadOnly = id.ReadOnly
	return c
}

// runResult renders a run: a failed run is a tool error with its message;
// a running one says how to check it; a finished one's text is its
// declared output (or, when it declares none, what it printed).
func runResult(rs luahost.RunState) (string, any, error) {
	switch rs.State {
	case "failed":
		return "", nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: rs.Error}
	case "running":
		return fmt.Sprintf("run %s of %s is still running; call check_run with run_id %s", rs.ID, rs.Script, rs.ID), rs, nil
	}
	out := rs.Printed
	if rs.Produced {
		out = rs.Output
	}
	if len(rs.Notices) > 0 {
		// A review's notices follow the result, a line each.
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += strings.Join(rs.Notices, "\n")
	}
	return out, rs, nil
}

// strictJSON decodes a tool's arguments, refusing unknown ones.
func strictJSON(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return refuse("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// serveScripts is scriptTools with the project of dir (none when dir is
// empty) for docs; it logs the entries of the scripts directory it
// skipped (a FIFO, a link leading out of it).
func serveScripts(st *satchel.Store, dir, scripts string, limits luahost.ScriptsLimits, run luahost.Config, log *slog.Logger) ([]mcpserver.CustomTool, func(), error) {
	var project *satchel.Project
	if dir != "" {
		p, err := satchel.LoadProject(dir)
		if err != nil {
			return nil, nil, err
		}
		project = p
	}
	return scriptTools(st, project, scripts, limits, run, log)
}
