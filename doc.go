// Package satchel is the workspace store for AI agents: a versioned file
// system per thread, typed collections, spill of large tool outputs and an
// envelope for untrusted text, over memory, SQLite or PostgreSQL.
//
// # A first workspace
//
// Open a store (here in memory; a file path opens SQLite, a postgres://
// URL PostgreSQL), then a workspace: one thread of one scope (a tenant).
//
//	st, err := satchel.Open(ctx, "memory:")
//	ws, err := st.Workspace(ctx, "acme", "main")
//	err = ws.Write(ctx, "notes/plan.md", "# Plan\n1. read\n2. think\n3. write\n")
//
// Reads take optional 1-based, inclusive line bounds, and can number the
// lines so that an agent can cite them:
//
//	s, _ := ws.Read(ctx, "notes/plan.md", 2, 3)          // "1. read\n2. think"
//	n, _ := ws.ReadNumbered(ctx, "notes/plan.md", 2, 3)  // "2| 1. read\n3| 2. think"
//
// Edits replace text that must occur exactly once (or every occurrence
// with replaceAll), so an edit never lands in the wrong place:
//
//	_, err = ws.StrReplace(ctx, "notes/plan.md", "2. think", "2. think hard", false)
//
// Glob (`*` within a segment, `**` across segments), List and Grep find
// files; Exists, Stat, Move and Delete do what they say. Every path is
// validated (no `..`, no absolute paths, no device names: DESIGN §2.1), and
// every refusal is an error of a kind you can match with errors.Is
// (ErrNotFound, ErrInvalidPath, ErrAmbiguousAnchor, ...) whose message says
// what was refused and why.
//
// # Versions
//
// Every mutation is a commit. Name one with Checkpoint, list them with
// History, read any retained commit with At, compare two with Diff and
// DiffFile, go back with Restore (itself a commit: nothing is lost), and
// branch with Fork, which copies nothing:
//
//	ws.Checkpoint(ctx, "before-rewrite")
//	ws.Write(ctx, "notes/plan.md", "something else")
//	old, _ := ws.At(ctx, "before-rewrite")
//	text, _ := old.Read(ctx, "notes/plan.md")
//	alt, _ := ws.Fork(ctx, "before-rewrite", "experiment")
//
// Storage grows with the size of each change, not of the workspace. A
// retention policy (SetRetention) drops old commits from the log, and
// Store.GC reclaims what no retained commit reaches, safely while writers
// run. Store.SetDefaultRetention gives a scope's new threads a policy;
// Store.ScopeUsage reports what each scope holds, Store.Purge removes
// one, and Store.ArchiveThread makes a thread read-only, refusing writes
// with ErrArchived (docs/operations.md).
//
// # Concurrency
//
// A Store and its Workspaces are safe for concurrent use, also across
// processes sharing one SQLite file or one PostgreSQL database: each commit
// is a compare-and-swap on the thread's head, retried against the new head
// when another writer wins, so appends all land and an edit whose anchor
// moved is checked again. Callers that read, think, then write pass
// IfHash(stat.Hash) to be refused (ErrConflict) if the file changed
// meanwhile. Batch applies several mutations as one commit; Fanout runs
// arms concurrently and reports a write-write race (ErrWriteRace) instead of
// letting the last writer win.
//
// # Bounds
//
// Each workspace is bounded (Limits: total bytes counted as JSON strings,
// number of files, bytes per file); a mutation that would exceed a bound is
// refused whole. A scope may also have quotas over all its threads and
// collections (Store.SetQuota: bytes, files, threads, documents, history
// bytes), kept as counters and checked in the transaction of each change,
// so they hold across processes; a change past one is refused whole with
// ErrQuotaExceeded (docs/operations.md).
//
// # Files as io/fs
//
// Workspace.FS and Snapshot.FS give the files of a commit as an fs.FS
// (with ReadDir, ReadFile, Stat and Glob), for fs.WalkDir,
// template.ParseFS or http.FS:
//
//	fsys, _ := ws.FS(ctx)
//	fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error { ... })
//
// # Collections
//
// Typed documents live in collections, each defined by a store file of a
// project directory (stores/NAME.json: its key template, its fields, its
// history, TTL and indexes; agents/NAME/agent.json grants an agent read or
// rw access). Load the project once, then open a store of a scope:
//
//	p, err := satchel.LoadProject("research")           // stores/, agents/
//	notes, err := st.Collection(ctx, p, "acme", "research-notes")
//	key, version, err := notes.Set(ctx, `{"company_id": "c1", "topic": "pricing", ...}`)
//	d, err := notes.Get(ctx, key, true)                 // with its earlier versions
//	page, err := notes.Query(ctx, satchel.QueryRequest{Where: "confidence > 0.5", Sort: "-updated_at", Limit: 20})
//
// Set validates the document against the store's schema and refuses it
// whole, with every field at fault (ErrValidation); each Set is a new
// version. A document past its TTL counts as absent. A shared store is
// read-only to agents (ErrReadOnly); an agent's grants are checked with
// the AsAgent option of Collection (ErrAccessDenied). CollectionTools and
// CallCollectionTool expose an agent's stores as tools, as the MCP server
// does.
//
// # Spill
//
// Package spill keeps a large tool result out of a model's context
// without losing it: a spill.Policy saves the whole text and returns its
// head and tail around a notice that says where the rest is and how to
// read it. spill.NewWorkspace saves into the agent's own thread (files
// spill/...), which its read tools already reach:
//
//	b := spill.NewWorkspace(
//		func(ctx context.Context, p, c string) error { return ws.Write(ctx, p, c) },
//		func(ctx context.Context, p string) (string, error) { return ws.Read(ctx, p) })
//	r := spill.Policy{MaxInlineBytes: 64 << 10}.Apply(ctx, b, owner, "grep", "", output)
//	// r.Text is output itself when small, else the preview
//
// # Untrusted text
//
// Text an agent stored may have come from anywhere; before it goes back
// into a prompt, wrap it in the untrusted envelope: a preface saying it is
// data, not instructions, and the text between markers carrying a nonce
// the text cannot guess. One Run is one agent run (one server session, one
// script run) with one nonce:
//
//	run, _ := satchel.NewRun()
//	prompt := run.Untrusted(page)
//
// # Tokens
//
// An HTTP server authenticates each caller by a bearer token that names
// its agent and scope (and optionally its thread). CreateToken returns the
// secret once (only its hash is stored); Authenticate resolves a secret to
// its Token, refusing an expired or revoked one; RevokeToken ends it:
//
//	secret, tok, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme", Expires: 30 * 24 * time.Hour})
//	tok, err = st.Authenticate(ctx, secret)
//
// # Checking storage
//
// Store.Check reads every retained commit and reports every fault it
// finds (a missing or undecodable object, totals that do not match the
// tree, a checkpoint or head that points wrong), each with its thread,
// commit and object; `satchel check --storage` runs it.
//
// # Backends
//
// The storage contract is package backend; satcheltest is the conformance
// suite a backend must pass, so you can write and prove your own and use it
// with New.
package satchel
