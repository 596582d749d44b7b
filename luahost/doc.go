// Package luahost runs Lua agent scripts against a satchel workspace: the
// Lua host of `satchel run` and of the MCP tool run_script. It is written
// over the Go API (package satchel) only, on gopher-lua (Lua 5.1).
//
// # A first script
//
// A script sees a workspace as the global store, with the file
// operations of DESIGN §2:
//
//	store.write("notes/summary.md", "# Summary\n" .. reply)
//	store.append("log.txt", "processed: " .. args .. "\n")
//
//	local content = store.read("notes/summary.md")
//	local slice = store.read("notes/summary.md", 20, 40)          -- lines 20-40 only
//	local numbered = store.read_numbered("notes/summary.md", 20, 40) -- "20| ..." to "40| ..."
//
//	store.str_replace("notes/summary.md", "old text", "new text")
//	local files = store.glob("notes/*.md")  -- a sequence, sorted
//	local exists = store.exists("notes/summary.md")
//	store.delete("notes/summary.md")          -- silent when missing
//	store.append("log.txt", "step 3\n", {idempotency_key = "run-7-step-3"}) -- once, even if retried
//
// Mutators return nothing. Every refusal raises a Lua error with the Go
// API's message after the script's file and line, which pcall can catch:
//
//	summarize.lua:12: anchor occurs 2 times in notes/summary.md, expected exactly one
//
// Run it from Go with Compile (or Load) and Run:
//
//	s, err := luahost.Load("summarize.lua")
//	res, err := s.Run(ctx, luahost.Config{Store: st, Scope: "acme", Thread: "main",
//		Args: []string{"first", "run"}, Stdout: os.Stdout})
//
// A failure is an *Error whose message is what the script would read, and
// which matches the refusal's kind with errors.Is (satchel.ErrAmbiguousAnchor).
//
// # The globals
//
// store, docs (the collections of Config.Project, as Config.Agent: get,
// set, query, list, remove, with tables for documents), untrusted (the
// run's untrusted envelope, DESIGN §5), fanout, args (the arguments joined
// by spaces), arg (them as a sequence) and print (to Config.Stdout). Only
// the base, table, string and math libraries are open; os, io, debug,
// package, require, module, dofile, loadfile, load, loadstring, setfenv,
// getfenv, rawset, rawget, rawequal, newproxy and collectgarbage are not
// there, and string.dump is gone (no bytecode).
//
// Every mutator (store.write, append, str_replace, delete; docs set and
// remove) takes an optional last argument, {idempotency_key = "K"}: a
// retry with the same K and arguments returns the first result and
// changes nothing (satchel.IdempotencyKey).
//
// # Declared input and output
//
// A script may open with a frontmatter block, YAML in a Lua block comment
// on its first line; unknown keys are refused:
//
//	--[[
//	name: summarize
//	description: Summarize the input
//	input: {path: in/text.md, description: the text to summarize}
//	output: out/summary.md
//	]]
//
// Script.ResolveInput turns a caller's input_file or input_text into the
// content written at the input path before the run; after it, the output
// path's content is Result.Output, and a declared output the script did
// not write is an error (`the script declares output "out/summary.md"
// but it was not produced`).
//
// # Fanout
//
// fanout(fn, t1, t2, ...) calls fn(t, i) once per table, concurrently,
// each call in a Lua state of its own over the same workspace, and
// returns the calls' results in order:
//
//	local results = fanout(function(t, i)
//	  store.write("notes/" .. t.topic .. ".md", "findings of arm " .. i)
//	  return {topic = t.topic}
//	end, {topic = "forks"}, {topic = "retention"})
//
// An arm sees its argument (a copy), its index and the globals above, not
// the script's locals (fn's upvalues are nil in an arm); arguments and
// results are plain data (nil, booleans, numbers, strings and tables of
// them). Two arms writing one path is a write-write race, raised in the
// later arm and then by fanout, which reports the first failing arm once
// every arm has finished; appends from several arms are legal. At most
// Config.FanoutMax arms run at once; fanouts nest at most MaxFanoutDepth
// deep.
//
// # Limits
//
// Every run executes in a child process of its own: the program started
// again, where ChildMain takes over (every program that runs scripts calls
// it first in main). The child holds the Lua interpreter only; the store,
// the collections, the untrusted envelope and fanout's race record stay in
// the calling process, which carries out the child's calls over a pipe
// with the caller's identity (docs/decisions/0105-lua-runs-in-child-processes.md).
// Config.Pool gives runs children started ahead; Config.InProcess runs a
// trusted script in the calling process instead.
//
// A run is bounded by Config.Timeout (every arm included) and
// Config.MaxMemory: string.rep, string.format, table.concat, gsub, the
// store's reads and untrusted refuse to build a value past the limit; the
// child's live heap is checked at every collection and by a watchdog; the
// operating system bounds the child's data segment and CPU time, and the
// parent kills it past its time limit. A child that dies ends its run
// only: `script exceeded its memory limit (256 MiB)`, `script exceeded its
// time limit (30s)`, or `script crashed: ...` (ErrCrashed). The call stack
// holds 200 calls; the pattern functions (find, match, gmatch, gsub) run
// on a matcher that stops with the run.
//
// # Atomic runs
//
// With Config.Atomic the script runs on a fork of the thread's head, and
// its commits reach the thread only if it succeeds, in one commit made
// with one compare-and-swap of the head (satchel.Workspace.PublishTo). A
// run that fails publishes nothing; if the thread moved meanwhile, the run
// fails with `thread main changed during the run; nothing was published`
// and names the thread where its work is kept.
//
// # Serving scripts
//
// Scripts serves a directory of scripts to callers that cannot wait for a
// long run (MCP clients): Start waits up to a time and returns the run's
// state, and Check follows a run still going. SetLimits bounds the runs at
// once, across callers and per credential; a run started with
// StartRequest.Until ends with that context (a session). satchel serve
// --scripts DIR exposes them as the tools run_script and check_run.
package luahost
