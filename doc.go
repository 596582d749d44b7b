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
// run.
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
// refused whole.
//
// # Backends
//
// The storage contract is package backend; satcheltest is the conformance
// suite a backend must pass, so you can write and prove your own and use it
// with New.
package satchel
