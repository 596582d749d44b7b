// Package mcpserver serves a satchel store to AI agents over the Model
// Context Protocol: the file tools of DESIGN §6, the generated collection
// tools of the agent's stores, and the files as resources, over stdio or
// streamable HTTP. It calls the public Go API only; `satchel serve` is a
// thin command over it.
//
// # Running it
//
// Over stdio, the default, the client starts the server and talks to it on
// standard input and output; logs go to standard error. With no flags it
// serves the thread main of the scope default of ./satchel.db (created if
// missing):
//
//	satchel serve
//	satchel serve --db team.db --scope acme --agent research --thread draft-2
//
// A client such as Claude Desktop or Claude Code is configured with the
// command:
//
//	{
//	  "mcpServers": {
//	    "satchel": {
//	      "command": "satchel",
//	      "args": ["serve", "--db", "/home/me/agent.db", "--scope", "acme", "--agent", "research"]
//	    }
//	  }
//	}
//
// (or `claude mcp add satchel -- satchel serve --db /home/me/agent.db`).
//
// Over HTTP, one server serves many agents and tenants. Each caller sends
// a bearer token, made once by an operator; the token decides the scope
// (the only one it can touch), the agent and, optionally, the thread:
//
//	satchel token create --agent research --scope acme --expires 720h
//	  (prints stk_… once; only its hash is stored)
//	satchel serve --http 127.0.0.1:8080
//
// The client points at http://127.0.0.1:8080/mcp with the header
// "Authorization: Bearer stk_…":
//
//	{
//	  "mcpServers": {
//	    "satchel": {
//	      "type": "http",
//	      "url": "http://127.0.0.1:8080/mcp",
//	      "headers": {"Authorization": "Bearer stk_…", "X-Satchel-Thread": "draft-2"}
//	    }
//	  }
//	}
//
// X-Satchel-Thread (optional) chooses the session's thread within the
// token's scope; a token made with --thread allows only that one. A thread
// that does not exist yet is made by the session's first write; until
// then its reads are refused with the scope's threads, as the CLI refuses
// a mistyped --thread. Every
// request is authenticated, so `satchel token revoke ID` ends the sessions
// of a token at their first request once the last check of the token is
// older than Config.TokenCheckInterval (1 s at most), and an expired token
// is refused the same way (401, with WWW-Authenticate). The server refuses to listen on
// an address that is not loopback while no usable token exists. On a
// loopback listener, a request whose Host header is not loopback is
// refused (403), so that a web page cannot reach the server by DNS
// rebinding. For tools that cannot send a token, such as the MCP
// conformance suite (scripts/mcp-conformance.sh), `satchel serve
// --insecure-no-auth` (Config.InsecureNoAuth) lets requests without one in
// as --scope, --agent and --thread; it is refused on any address but
// loopback, and a request that carries a token is still checked. GET
// /healthz answers "ok" when the store answers; GET
// /metrics serves Prometheus metrics (calls, errors and latency per tool,
// bytes stored, spills, sessions). On SIGINT or SIGTERM the server stops
// accepting, lets the calls in flight finish, then exits.
//
// Every MCP revision the Go SDK speaks is served, over stdio and HTTP:
// 2024-11-05 to 2025-11-25 with sessions, 2026-07-28 without (each request
// carries its _meta; the key MetaThread, "dev.satchel/thread", or the
// X-Satchel-Thread header names a request's thread). Servers on one
// database answer each other's sessions: a session id is signed with a key
// kept in the store, and any of them rebuilds the session from it, so
// replicas need no sticky routing (docs/mcp.md, "Protocol revisions").
//
// No tool argument can name a scope: the identity comes from the flags
// (stdio) or the token (HTTP), never from a tool call.
//
// # In a Go program
//
// The server is a library: New takes an open store and the identity of
// stdio sessions; Run serves one session over any MCP transport, Handler
// is the HTTP handler, and ListenAndServe adds the exposure check and a
// graceful shutdown:
//
//	st, err := satchel.Open(ctx, "agent.db")
//	s, err := mcpserver.New(mcpserver.Config{Store: st, Scope: "acme", Agent: "research"})
//	err = s.Run(ctx, &mcpserver.IOTransport{Reader: os.Stdin, Writer: os.Stdout}) // or:
//	err = s.ListenAndServe(ctx, "127.0.0.1:8080")                                 // tokens from st.CreateToken
//
// IOTransport is satchel serve's stdio transport: it speaks as the SDK's
// mcp.IOTransport and mcp.StdioTransport do (either works with Run), but
// decodes each incoming message once where they decode it three times,
// and answers a request over its bound, or a batch where batches are
// refused, with an error where they end the session.
//
// # Tools
//
// read_file, write_file, append_file, edit_file, stat_file, glob, grep,
// list_files, delete_file, move_file, checkpoint, history, diff, restore,
// list_threads and fork (each may carry a prefix, --tool-prefix). Their text content is the
// result itself: a read is the text read (numbered "N| line" by default),
// glob and list_files one path a line, grep "path:line:text" lines,
// history one commit a line ("SEQ\tTIME\tCHECKPOINTS\tSUMMARY", as
// `satchel log` prints it), diff "added\tPATH" lines or a unified diff,
// a mutation one line that says what it did ("replaced 1 occurrence in
// notes/plan.md"). The structured content
// carries the same as JSON. A notice (read_file's max_chars or a
// start_line past the end, grep's and list_files' limit, an empty
// list_files) comes as a text item of its own, only when it applies.
//
// Arguments are validated by the server itself, every problem reported at
// once, in satchel's words; refusals are tool errors (isError) whose text
// is exactly the message of the Go API, such as `file not found: a.md` or
// `anchor occurs 2 times in a.md, expected exactly one`. Writes take an
// if_hash precondition (the hash stat_file reports); reads, glob, grep and
// diff take a commit (at, from, to: a sequence number or checkpoint name).
// Every commit records the agent, the token's ID and the tool
// ("mcp:write_file").
//
// # Spill and the envelope
//
// A result larger than the spill limit (64 KiB by default) is saved as a
// file of the caller's own thread under spill/, and replaced by its head,
// a notice (a separate item) naming the file and the read_file call that
// reads it, and its tail (DESIGN §4). read_file is never spilled: max_chars
// (default: the spill limit) caps it instead. With --wrap-untrusted, the
// text of results that hold file or document content (read_file, grep, a
// file's diff, collection tools) is wrapped in the untrusted envelope of
// DESIGN §5, with one nonce per session; results then carry no
// structured content (it would carry the same stored text outside the
// envelope) and the tools declare no output schema.
//
// # Resources
//
// Each file of the session's thread is a resource satchel:///PATH (each
// segment percent-encoded): resources/list lists them in path order,
// resources/read reads one, and the template satchel:///{+path} lets a
// client name any path. A session may subscribe to a file, a glob
// (satchel:///?glob=PATTERN) or a store's documents
// (satchel:///?store=STORE), and is sent notifications/resources/updated
// when any process on the database changes them (Config.MaxSubscriptions
// bounds a session's; docs/mcp.md).
//
// # Collections
//
// The tools of typed collections (store__NAME__get, set, query, list,
// remove) come from a Collections implementation, usually
// ProjectCollections over a project loaded with satchel.LoadProject
// (`satchel serve --dir`, by default the working directory when it has
// stores/ or agents/). Each session sees only the tools its agent is
// granted; any other name is refused as an unknown tool, and a shared store
// refuses agents' writes. Without an agent (stdio without --agent) there
// are no collection tools.
package mcpserver
