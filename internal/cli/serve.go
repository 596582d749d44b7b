package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/gitrepo"
	"github.com/satchel-dev/satchel/inspector"
	"github.com/satchel-dev/satchel/internal/loopback"
	"github.com/satchel-dev/satchel/internal/version"
	"github.com/satchel-dev/satchel/luahost"
	"github.com/satchel-dev/satchel/mcpserver"
)

// loadCollections loads the collections of a project directory (--dir):
// the stores and agents the server's collection tools come from.
var loadCollections = func(ctx context.Context, st *satchel.Store, dir string) (mcpserver.Collections, error) {
	p, err := satchel.LoadProject(dir)
	if err != nil {
		return nil, err
	}
	return mcpserver.ProjectCollections(st, p), nil
}

// projectDir returns the project directory to serve: --dir when given,
// else the working directory when it holds stores/ or agents/ (as satchel
// init makes them), else none.
func projectDir(cmd *cobra.Command, dir string) string {
	if cmd.Flags().Changed("dir") {
		return dir
	}
	for _, sub := range []string{"stores", "agents"} {
		if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
			return "."
		}
	}
	return ""
}

// serveMemoryLimit is the Go runtime's soft memory limit in satchel
// serve, unless GOMEMLIMIT says otherwise.
const serveMemoryLimit = 320 << 20

// serveFlags are the flags of satchel serve.
type serveFlags struct {
	http, dir, agent, toolPrefix, logLevel string
	scripts, staleWrites                   string
	readOnly                               bool // --read-only: every caller read-only
	wrapUntrusted, insecureNoAuth, ui, git bool
	shell                                  bool
	callTimeout, shutdownTimeout           time.Duration
	maxInline                              int
	maxRequest                             int64
	maxSessions, maxSessionsPerToken       int
	maxRuns, maxRunsPerToken               int
	scriptTimeout                          time.Duration
	scriptMaxMemory                        string
	sessionIdle, bodyReadTimeout           time.Duration
	maxInflight                            int64
	maxStreamsPerToken                     int
	maxSubscriptions                       int
}

func newServeCmd(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:     "serve",
		GroupID: groupServe,
		Short:   "Serve the store to agents over MCP (stdio or HTTP)",
		Long: `Serve runs the MCP server: the file tools (read_file, write_file,
append_file, edit_file, stat_file, glob, grep, list_files, delete_file,
move_file, checkpoint, history, diff, restore, list_threads, fork,
switch_thread, merge), the files as resources, and the collection tools of
the agent's stores.

The collections are those of the project directory --dir (stores/ and
agents/, as satchel init makes them; by default the working directory when
it has them): each agent sees only the tools of the stores its agent.json
grants, and shared stores take no writes from agents. --agent needs a
project directory: without one it is refused, rather than serving the file
tools alone. An MCP client starts the server in a working directory of its
own choosing: give --db and --dir as absolute paths.

By default it speaks MCP on standard input and output, for a client that
starts it; the caller is --scope, --thread and --agent, and logs go to
standard error. With no flags at all it serves the thread main of the scope
default of ./satchel.db.

With --http ADDR it serves streamable HTTP at http://ADDR/mcp, plus
/healthz and /metrics (Prometheus). Every request then needs a bearer token
(satchel token create), which decides the scope, the agent and, if the
token names one, the thread; a session may choose its thread with the
header X-Satchel-Thread. The server refuses an ADDR that is not loopback
while no usable token exists. On SIGINT or SIGTERM it stops accepting,
finishes the calls in flight, then exits. With --ui it also serves the
web inspector (satchel ui) under /ui/ on the same listener, and with --git
every thread as a git repository under /git/ (git clone
http://x:TOKEN@ADDR/git/SCOPE/THREAD.git, fetch, fast-forward push; the
token is the password; docs/git.md).

--insecure-no-auth (with --http, on a loopback address only) lets requests
that carry no token in, as --scope, --agent and --thread: for tools that
cannot send a token, such as the MCP conformance suite. Any local process
can then use the store; never use it to serve agents.

Over HTTP, --max-sessions and --max-sessions-per-token bound the open
sessions (the excess is refused with 503 and 429), --session-idle-timeout
closes idle ones, --max-inflight-bytes bounds the request bytes held at once
(charged as they arrive), and --body-read-timeout bounds the time a
request's body may take to arrive (408 past it); with --ui,
--max-streams-per-token bounds the live inspector pages of one token (429
past it; docs/security.md).

With --scripts DIR, run_script runs a script of DIR in a child process of
its own, under --script-timeout and --script-max-memory; --max-runs (32)
and --max-runs-per-token (4) bound the runs at once, and a run ends with
its session unless started with detach (docs/lua.md).

A session may subscribe to a file (satchel:///PATH), a glob
(satchel:///?glob=PATTERN) or a store's documents (satchel:///?store=STORE)
and is notified of the changes any process or replica makes there; it holds
at most --max-subscriptions. A request over --max-request-bytes is refused
with an error, and a stdio session goes on (docs/mcp.md).

With --shell, run_shell runs a shell script over the caller's workspace,
in the server's process, as one commit (docs/shell.md).

Results over --max-inline-bytes are saved under spill/ in the caller's
thread and replaced by a preview; --wrap-untrusted wraps the text of
every result in the untrusted envelope, and results then carry no
structured content.`,
		Example: `  satchel serve
  satchel serve --db team.db --scope acme --agent research --thread draft-2
  satchel token create --agent research --scope acme && satchel serve --http 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd, a, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	fl.StringVar(&f.dir, "dir", "", "project `DIR` with stores/ and agents/ (default: . when it has them)")
	fl.StringVar(&f.agent, "agent", "", "the agent that stdio sessions act as (over HTTP the token says)")
	fl.StringVar(&f.toolPrefix, "tool-prefix", "", "put `PREFIX` before the file tools' names")
	fl.BoolVar(&f.readOnly, "read-only", false, "every caller may read files and documents, not change them (restore and merge included)")
	fl.StringVar(&f.staleWrites, "stale-writes", "refuse", "a session's change to a file that changed since it last read it (or that it never read): refuse, warn (apply it with a notice) or off")
	fl.BoolVar(&f.insecureNoAuth, "insecure-no-auth", false, "with --http on a loopback address: let requests without a token act as --scope/--agent/--thread (for testing)")
	fl.BoolVar(&f.ui, "ui", false, "with --http: serve the web inspector under /ui/ on the same listener")
	fl.BoolVar(&f.git, "git", false, "with --http: serve every thread as a git repository under /git/ (clone, fetch, fast-forward push; docs/git.md)")
	fl.BoolVar(&f.wrapUntrusted, "wrap-untrusted", false, "wrap file and document content in the untrusted envelope")
	fl.DurationVar(&f.callTimeout, "call-timeout", mcpserver.DefaultCallTimeout, "longest a tool call may run")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", mcpserver.DefaultShutdownTimeout, "longest a shutdown waits for the calls in flight")
	fl.IntVar(&f.maxInline, "max-inline-bytes", 65536, "spill results larger than `N` bytes (and read_file's default max_chars)")
	fl.Int64Var(&f.maxRequest, "max-request-bytes", mcpserver.DefaultMaxRequestBytes, "largest request accepted, in bytes")
	fl.IntVar(&f.maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "with --http: most sessions open at once")
	fl.IntVar(&f.maxSessionsPerToken, "max-sessions-per-token", mcpserver.DefaultMaxSessionsPerToken, "with --http: most sessions one token holds open")
	fl.DurationVar(&f.sessionIdle, "session-idle-timeout", mcpserver.DefaultSessionIdleTimeout, "with --http: close a session idle this long")
	fl.Int64Var(&f.maxInflight, "max-inflight-bytes", mcpserver.DefaultMaxInflightBytes, "with --http: most request bytes held at once, over all requests")
	fl.DurationVar(&f.bodyReadTimeout, "body-read-timeout", mcpserver.DefaultBodyReadTimeout, "with --http: longest a request's body may take to arrive")
	fl.IntVar(&f.maxStreamsPerToken, "max-streams-per-token", inspector.DefaultMaxStreamsPerToken, "with --ui: most live inspector pages one token keeps open")
	fl.IntVar(&f.maxSubscriptions, "max-subscriptions", mcpserver.DefaultMaxSubscriptions, "most resource subscriptions one session holds")
	fl.BoolVar(&f.shell, "shell", false, "add the tool run_shell: a shell script over the caller's workspace, as one commit (docs/shell.md)")
	fl.StringVar(&f.scripts, "scripts", "", "add the tools run_script and check_run over the Lua scripts of `DIR`")
	fl.IntVar(&f.maxRuns, "max-runs", luahost.DefaultMaxRuns, "with --scripts: most script runs at once, across the server")
	fl.IntVar(&f.maxRunsPerToken, "max-runs-per-token", luahost.DefaultMaxRunsPerToken, "with --scripts: most script runs of one token at once")
	fl.DurationVar(&f.scriptTimeout, "script-timeout", luahost.DefaultTimeout, "with --scripts: longest a script run may take")
	fl.StringVar(&f.scriptMaxMemory, "script-max-memory", "256MiB", "with --scripts: most memory a script run may take (e.g. 64MiB, 1GiB)")
	fl.StringVar(&f.logLevel, "log-level", "info", "least severe level logged: debug, info, warn or error")
	return cmd
}

func serve(cmd *cobra.Command, a *app, f *serveFlags) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usagef("--log-level must be debug, info, warn or error, was %q", f.logLevel)
	}
	for name, v := range map[string]int64{
		"call-timeout": int64(f.callTimeout), "shutdown-timeout": int64(f.shutdownTimeout),
		"max-inline-bytes": int64(f.maxInline), "max-request-bytes": f.maxRequest,
		"max-sessions": int64(f.maxSessions), "max-sessions-per-token": int64(f.maxSessionsPerToken),
		"session-idle-timeout": int64(f.sessionIdle), "max-inflight-bytes": f.maxInflight,
		"body-read-timeout": int64(f.bodyReadTimeout), "max-streams-per-token": int64(f.maxStreamsPerToken),
		"max-subscriptions": int64(f.maxSubscriptions),
		"max-runs":          int64(f.maxRuns), "max-runs-per-token": int64(f.maxRunsPerToken), "script-timeout": int64(f.scriptTimeout),
	} {
		if v <= 0 {
			return usagef("--%s must be positive", name)
		}
	}
	if f.insecureNoAuth && f.http == "" {
		return usagef("--insecure-no-auth applies to --http only")
	}
	if f.git && f.http == "" {
		return usagef("--git applies to --http only")
	}
	if f.ui && f.http == "" {
		return usagef("--ui applies to --http only (or run satchel ui)")
	}
	if os.Getenv("GOGC") == "" {
		// The MCP SDK decodes each message several times, each time with
		// a fresh 32 KiB buffer: a call leaves ~0.3 MB of garbage while
		// the live heap stays small, so the default GOGC (100) collects
		// every few calls. 400 trades a larger heap for half the GC work
		// (docs/mcp-performance.md); GOGC in the environment still wins.
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit makes the collector work harder before the heap
		// passes the bound docs/security.md states (GOGC 400 alone would
		// let garbage grow to five times what is live).
		debug.SetMemoryLimit(serveMemoryLimit)
	}
	dir := projectDir(cmd, f.dir)
	if f.agent != "" && dir == "" && satchel.ValidAgentName(f.agent) == nil {
		return refuse("agent %s needs a project directory with agents/%s/agent.json; give --dir", f.agent, f.agent)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := a.open(ctx)
	if err != nil {
		return err
	}
	var cols mcpserver.Collections
	if dir != "" {
		if cols, err = loadCollections(ctx, st, dir); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	st.SetLogger(log) // the refusals of file rules
	var agentFiles func(string) satchel.FileRules
	var project *satchel.Project
	if dir != "" {
		if project, err = satchel.LoadProject(dir); err != nil {
			return err
		}
		agentFiles = mcpserver.ProjectFiles(project)
		for _, w := range project.Warnings() {
			log.Warn("project definition", "warning", w)
		}
	}
	var tools []mcpserver.CustomTool
	if f.scripts != "" {
		maxMemory, err := parseSize(f.scriptMaxMemory)
		if err != nil {
			return usagef("--script-max-memory: %v", err)
		}
		var closeScripts func()
		limits := luahost.ScriptsLimits{MaxRuns: f.maxRuns, MaxRunsPerToken: f.maxRunsPerToken}
		run := luahost.Config{Timeout: f.scriptTimeout, MaxMemory: maxMemory}
		if f.readOnly {
			run.Options = []satchel.WorkspaceOption{satchel.ReadOnlyFiles()}
			run.ReadOnlyDocs = true
		}
		if tools, closeScripts, err = serveScripts(st, dir, f.scripts, limits, run, log); err != nil {
			return err
		}
		defer closeScripts()
	}
	if f.shell {
		tools = append(tools, shellTool(st))
	}
	var ui http.Handler
	if f.ui {
		in, err := uiHandler(st, project, log, f.maxStreamsPerToken, f.bodyReadTimeout)
		if err != nil {
			return err
		}
		ui = in.Handler()
	}
	var gitHandler http.Handler
	if f.git {
		var tokenless func(*http.Request) (gitrepo.Identity, bool)
		if f.insecureNoAuth {
			id := gitrepo.Identity{Scope: a.scope, Agent: f.agent}
			tokenless = func(r *http.Request) (gitrepo.Identity, bool) { return id, loopback.Arrived(r) }
		}
		gitHandler = gitrepo.New(gitrepo.Config{Store: st, MaxRequestBytes: f.maxRequest, Tokenless: tokenless, Logger: log,
			AgentFiles: project.AgentFiles, Review: project.ReviewAgent, ReadOnly: f.readOnly})
	}
	s, err := mcpserver.New(mcpserver.Config{
		MaxSessions: f.maxSessions, MaxSessionsPerToken: f.maxSessionsPerToken,
		SessionIdleTimeout: f.sessionIdle, MaxInflightBytes: f.maxInflight, BodyReadTimeout: f.bodyReadTimeout,
		Store: st, Scope: a.scope, Thread: a.thread, Agent: f.agent,
		ToolPrefix: f.toolPrefix, Collections: cols, WrapUntrusted: f.wrapUntrusted,
		MaxInlineBytes: f.maxInline, CallTimeout: f.callTimeout, MaxRequestBytes: f.maxRequest,
		ShutdownTimeout: f.shutdownTimeout, Logger: log, Version: serverVersion(),
		InsecureNoAuth: f.insecureNoAuth, UI: ui, Git: gitHandler, Tools: tools, StaleWrites: f.staleWrites,
		MaxSubscriptions: f.maxSubscriptions,
		Review:           project.ReviewAgent,
		AgentFiles:       agentFiles, ReadOnly: f.readOnly,
	})
	if err != nil {
		return err
	}
	if cols != nil {
		// Expired documents are invisible at once; the sweeper deletes them.
		go st.RunSweeper(ctx, time.Minute, func(err error) { log.Warn("sweeping expired documents", "err", err) })
	}
	if f.http != "" {
		return s.ListenAndServe(ctx, f.http)
	}
	log.Info("serving MCP on stdio", "scope", a.scope, "thread", a.thread, "agent", f.agent)
	return s.Run(ctx, &mcpserver.IOTransport{
		Reader:          readCloser(a.stdin),
		Writer:          writeCloser(a.stdout),
		MaxMessageBytes: int(f.maxRequest),
	})
}

// serverVersion is the version the server reports to clients: the one
// satchel version prints.
func serverVersion() string { return version.Get().String() }

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok && w != io.Writer(os.Stdout) {
		return wc
	}
	return nopWriteCloser{w}
}
