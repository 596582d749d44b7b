package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// fileToolNames are the names of the file tools (DESIGN §6), before any
// prefix.
var fileToolNames = []string{
	"read_file", "write_file", "append_file", "edit_file", "stat_file",
	"glob", "grep", "list_files", "delete_file", "move_file",
	"checkpoint", "history", "diff", "restore", "list_threads", "fork", "switch_thread",
	"merge",
}

// fileTool is one file tool: its MCP definition, the arguments it takes
// and what it does.
type fileTool struct {
	base  string // the name without prefix
	tool  *mcp.Tool
	props []string
	run   func(ctx context.Context, c *call) (*outcome, error)
}

// call is one tool call in progress.
type call struct {
	s    *Server
	se   *session
	base string
	a    *args

	client, clientVersion string // the session's client (clientInfo)

	// stale holds the sentences of the stale changes a server that warns
	// applied (Config.StaleWrites), notices of the call's result.
	stale []string

	// handles are the workspace handles the call took: their notices
	// (satchel.Workspace.Notices, a review's) go in the result.
	handles []*satchel.Workspace
}

// notices drains the notices of the call's workspace handles.
func (c *call) notices() []string {
	var out []string
	for _, h := range c.handles {
		out = append(out, h.Notices()...)
	}
	return out
}

// workspace returns the caller's workspace, recording the commits it
// makes as the session's agent and credential, through this tool.
func (c *call) workspace(ctx context.Context) (*satchel.Workspace, error) {
	ws, err := c.se.workspace(ctx, &c.s.cfg)
	if err != nil {
		return nil, err
	}
	h := ws.ForActor(c.actor())
	c.se.adopt(h)
	if h.UnderReview() {
		c.handles = append(c.handles, h)
	}
	return h, nil
}

// actor is who the call's commits are made by: the session's agent and
// credential, through this tool.
func (c *call) actor() satchel.Actor {
	id := c.se.identity()
	return satchel.Actor{Agent: id.Agent, Credential: id.Credential, Via: "mcp:" + c.base, Client: c.client, ClientVersion: c.clientVersion}
}

// reader returns the workspace's head, or the commit at when it is set.
func (c *call) reader(ctx context.Context, at string, hasAt bool) (satchel.Reader, error) {
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	if !hasAt {
		return ws, nil
	}
	return ws.At(ctx, at)
}

// outcome is what a tool returns before the server renders it: the text
// (the result itself), notices that go in items of their own, and the
// structured content.
type outcome struct {
	text       string
	notices    []string
	structured any
	// untrusted marks text that is file or document content, or stored
	// names (paths, summaries). With Config.WrapUntrusted, render wraps
	// the text of these results only, and sends no structured content.
	untrusted bool
	// noSpill is set for read_file, which max_chars caps instead.
	noSpill bool
	// json marks text that is one line of JSON: a spill saves it one
	// value a line (jsonLines), so that read_file can page through it.
	json bool
	// stored counts the content bytes the call wrote, for metrics.
	stored int
	// image, when set, is the result instead of text (read_file of an
	// image).
	image *mcp.ImageContent
}

func withPrefix(cfg Config, base string) string { return cfg.ToolPrefix + base }

// Annotations.
var (
	yes = true
	no  = false
)

func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}
}

func mutating(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	d := &no
	if destructive {
		d = &yes
	}
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: d, IdempotentHint: idempotent, OpenWorldHint: &no}
}

const (
	pathDesc   = "Path of the file in the workspace: relative, '/'-separated, e.g. notes/plan.md (no leading '/', no '.' or '..' segments, no backslashes)."
	ifHashDesc = "Optional precondition: the file's content hash as stat_file (or a previous write_file) reported it. The change applies only if the file still has exactly that content; otherwise it is refused and nothing changes. Use it when you read, think, then change a file that others may change too."
	atDesc     = "Optional: read the workspace as it was at an earlier commit: a sequence number from history, a checkpoint name, or \"head\" (the default); or another thread of your scope: \"try-b\" (its newest commit) or \"try-b@3\" (its commit 3, or try-b@NAME for its checkpoint NAME)."
	// staleSentence says what the session's read ledger asks of a change
	// to an existing file (Config.StaleWrites).
	staleSentence = " A change to a file that exists needs a read_file of it (any part) in this session since it last changed: otherwise it is refused with a message naming who changed it, and you read it again, then change it."
	// refsSentence says how commits of other threads are named, for the
	// tools that take a commit.
	refsSentence = "A commit of another thread of your scope is THREAD@REF (\"try-b@3\", \"try-b@before-refactor\", \"try-b@head\") or THREAD alone for its newest commit; when a checkpoint of this thread has the same name as a thread, the name means the checkpoint (write THREAD@head for the thread)."
)

// fileTools returns the file tools of DESIGN §6, named with cfg's prefix.
// limitsSentence states the bounds of a write: one request's size
// (content given in base64 counts a third more) and one file's.
func limitsSentence(cfg Config) string {
	req := cmp.Or(cfg.MaxRequestBytes, DefaultMaxRequestBytes)
	return fmt.Sprintf(" Limits: one request is at most %s (the server's --max-request-bytes), so write larger content in parts: this tool with the first part, then %s with the rest; "+
		"a file is at most its workspace's max file bytes (%s unless set otherwise).", sizeText(req, true), withPrefix(cfg, "append_file"), sizeText(satchel.DefaultMaxFileBytes, true))
}

func fileTools(cfg Config) []fileTool {
	p := func(n string) string { return withPrefix(cfg, n) }
	// stale is the read ledger's sentence and extra, unless the server
	// keeps no ledger.
	stale := func(extra string) string {
		if cfg.StaleWrites == StaleOff {
			return ""
		}
		if strings.HasPrefix(extra, ";") {
			return extra
		}
		return staleSentence + extra
	}
	maxInline := cfg.MaxInlineBytes
	defs := []struct {
		base, title, desc string
		props             []prop
		output            []prop
		spillable         bool
		// noKey leaves out the idempotency_key argument, for a tool that
		// is idempotent by itself (a merge made again finds nothing new).
		noKey bool
		ann   *mcp.ToolAnnotations
		run   func(ctx context.Context, c *call) (*outcome, error)
	}{
		{
			base: "read_file", title: "Read a file",
			desc: "Read the text file at path. By default the whole file, each line prefixed with its 1-based number and \"| \" (right-aligned: \" 9| ...\", \"10| ...\"). " +
				"The numbers are for citing lines and choosing start_line/end_line; they are not part of the file, so never copy them into edit_file's old_text or into content. Set numbered to false for the exact text. " +
				"For a large file, read a slice with start_line and end_line (1-based, inclusive; the slice keeps the file's line numbers): start_line must be at least 1, start_line past the last line returns nothing, end_line defaults to the last line and is clamped to it, end_line before start_line is an error, and end_line needs start_line. " +
				"The result is cut at max_chars characters; then a separate notice says where to continue (start_line=N, and start_char=C when the cut is inside a line longer than max_chars). " +
				"Use at to read the file as it was at an earlier commit. " +
				"A binary file is not returned as text: a PNG, JPEG, GIF or WebP image comes as image content, any other binary file as a notice with its size and type.",
			props: []prop{
				req("path", str(pathDesc)),
				opt("start_line", obj{{"type", "integer"}, {"description", "First line to return, 1-based (the first line is 1). Omit to start at the first line."}, {"minimum", 1}}),
				opt("end_line", obj{{"type", "integer"}, {"description", "Last line to return, inclusive; clamped to the last line. Needs start_line. Omit to read to the end."}, {"minimum", 1}}),
				opt("numbered", withDefault(boolean("Prefix each line with its number and \"| \" (default true). false returns the content exactly."), true)),
				opt("at", commitRef(atDesc)),
				opt("max_chars", withDefault(integer("Most characters to return (default "+strconv.Itoa(maxInline)+"); a longer result is cut, with a notice saying where to continue.", 1, MaxReadChars), maxInline)),
				opt("start_char", withDefault(integer("Characters of the first line read (start_line, or line 1) to skip: continues inside a line longer than max_chars, as the notice of a cut result says.", 0, math.MaxInt32), 0)),
			},
			output: []prop{
				req("text", str("What was read.")),
				opt("truncated", boolean("Set when max_chars cut the text.")),
				opt("next_line", obj{{"type", "integer"}, {"description", "When truncated: the line to continue from."}}),
				opt("next_char", obj{{"type", "integer"}, {"description", "When the cut is inside the first line read: the start_char to continue from."}}),
				opt("notice", str("When truncated: the notice.")),
				opt("binary", boolean("Set when the file is binary (not valid UTF-8, or holding NUL bytes): an image comes as image content, any other binary file as a notice; text is then empty.")),
				opt("type", str("When binary: the file's type, sniffed from its bytes (image/png, application/octet-stream, ...).")),
				opt("size", obj{{"type", "integer"}, {"description", "When binary: its size in bytes."}}),
			},
			ann: readOnly("Read a file"),
			run: runRead,
		},
		{
			base: "write_file", title: "Write a file",
			desc: "Create the file at path, or replace its whole content with content. Directories are implicit: writing notes/a.md makes notes/ appear. " +
				"To change part of a file use edit_file; to add to its end use append_file. A file cannot be written where a directory is (or below a file). " +
				"For binary content give it in base64 with encoding \"base64\". " +
				"With if_hash, the write applies only if the file still has that content hash (see stat_file). " +
				"Returns a confirmation; the structured result (when the server sends one) carries the new content's hash, for a later if_hash, as stat_file does. " +
				"When your changes wait for review, a notice says so (\"your changes wait for review R-...\"): the change is in your review thread, which you read, until a person approves it." + stale(" A new file needs no read.") +
				limitsSentence(cfg),
			props: []prop{
				req("path", str(pathDesc)),
				req("content", str("The file's entire new content.")),
				opt("encoding", withDefault(obj{{"type", "string"}, {"enum", []string{"utf-8", "base64"}}, {"description", "How content is given: \"utf-8\" (the default) for text, \"base64\" (standard, padded) for binary bytes such as an image."}}, "utf-8")),
				opt("if_hash", str(ifHashDesc)),
			},
			output: []prop{req("path", str("")), req("bytes", obj{{"type", "integer"}}), req("hash", str("The new content's hash, for if_hash.")), unchangedProp},
			ann:    mutating("Write a file", true, true),
			run:    runWrite,
		},
		{
			base: "append_file", title: "Append to a file",
			desc: "Add content at the end of the file at path, creating the file if it does not exist. Nothing is inserted in between: to add lines, make sure the file ends with a newline or start content with one. " +
				"Appends are atomic, and concurrent appends all land" + stale("; an append needs no earlier read") + ".",
			props: []prop{
				req("path", str(pathDesc)),
				req("content", str("The text to add at the end of the file.")),
			},
			output: []prop{req("path", str("")), req("bytes", obj{{"type", "integer"}})},
			ann:    mutating("Append to a file", false, false),
			run:    runAppend,
		},
		{
			base: "edit_file", title: "Edit a file",
			desc: "Replace old_text with new_text in the file at path, and say how many occurrences were replaced (\"replaced 1 occurrence in notes/plan.md\"). " +
				"old_text must match the file exactly, whitespace and indentation included (without read_file's line-number prefixes), and must not be empty. " +
				"It must occur exactly once, unless replace_all is true: if it occurs several times the edit is refused with the count, so add enough surrounding lines to make it unique. " +
				"If it does not occur, the edit is refused: read the file again. new_text may be empty, to delete old_text. " +
				"With if_hash, the edit applies only if the file still has that content hash (see stat_file)." + stale(""),
			props: []prop{
				req("path", str(pathDesc)),
				req("old_text", str("The exact text to replace; must occur exactly once unless replace_all is true.")),
				req("new_text", str("The replacement text (may be empty).")),
				opt("replace_all", withDefault(boolean("Replace every occurrence instead of requiring exactly one."), false)),
				opt("if_hash", str(ifHashDesc)),
			},
			output: []prop{req("path", str("")), req("replaced", obj{{"type", "integer"}}), unchangedProp},
			ann:    mutating("Edit a file", true, false),
			run:    runEdit,
		},
		{
			base: "stat_file", title: "Describe a file",
			desc: "Describe the file at path: its size in bytes, number of lines, last modification time (UTC), content hash (SHA-256, hex) and type (text/plain; charset=utf-8 for text, else sniffed from its bytes: image/png, application/octet-stream, ...), one \"name: value\" a line. " +
				"Give the hash as the if_hash argument of write_file, edit_file, delete_file or move_file to make them apply only if the file has not changed meanwhile.",
			props: []prop{req("path", str(pathDesc))},
			output: []prop{
				req("path", str("")), req("size", obj{{"type", "integer"}}), req("lines", obj{{"type", "integer"}}),
				req("modified", obj{{"type", "string"}, {"format", "date-time"}}), req("hash", str("")),
				opt("type", str("The content's type.")),
			},
			ann: readOnly("Describe a file"),
			run: runStat,
		},
		{
			base: "glob", title: "Find files by pattern",
			desc: "Find the files whose path matches a pattern, sorted, one path a line. \"*\" matches any characters within one path segment (not \"/\"); \"**\" as a whole segment matches zero or more segments. " +
				"Examples: \"**/*.md\" (every Markdown file), \"notes/*\" (the files directly in notes/), \"src/**\" (everything under src/). " +
				"There is no \"?\", \"[...]\" or \"{a,b}\", and no backslash escapes: such patterns are refused rather than matching nothing. When no file matches, the result says \"no files match PATTERN\". Use at to search an earlier commit.",
			props: []prop{
				req("pattern", str("The glob pattern, matched against whole paths.")),
				opt("at", commitRef(atDesc)),
			},
			output:    []prop{req("paths", array(obj{{"type", "string"}}))},
			spillable: true,
			ann:       readOnly("Find files by pattern"),
			run:       runGlob,
		},
		{
			base: "grep", title: "Search file contents",
			desc: "Search the lines of files for the regular expression pattern (Go RE2 syntax: linear time, no backreferences or lookaround; \"(?i)\" for case-insensitive). " +
				"Returns the matching lines in path then line order, one a line as \"path:line:text\" (line numbers are 1-based; lines longer than 2000 characters are cut). " +
				"path restricts the search to a directory (default: the whole workspace). include keeps only files matching a glob: without \"/\" it is matched against the file's name (\"*.go\"), with \"/\" against the path relative to path. " +
				"When nothing matches, the result says \"no matches for PATTERN\". limit bounds the matches (default 1000); when it stops the search, a separate notice says so. Binary files are skipped, and a notice says how many. Use at to search an earlier commit.",
			props: []prop{
				req("pattern", str("The regular expression (RE2), at most 4096 bytes.")),
				opt("path", str("Directory to search in, e.g. \"src\" (default: the whole workspace).")),
				opt("include", str("Optional glob that files must match, e.g. \"*.md\"; a leading \"!\" excludes the files it matches instead, e.g. \"!*.md\".")),
				opt("limit", withDefault(integer("Most matches to return.", 1, maxGrepLimit), satchel.DefaultGrepLimit)),
				opt("at", commitRef(atDesc)),
			},
			output: []prop{
				req("matches", array(obj{{"type", "object"}, {"properties", obj{
					{"path", obj{{"type", "string"}}}, {"line", obj{{"type", "integer"}}}, {"text", obj{{"type", "string"}}},
				}}})),
				opt("truncated", boolean("Set when limit stopped the search.")),
				opt("skipped_binary", obj{{"type", "integer"}, {"description", "How many binary files were skipped."}}),
			},
			spillable: true,
			ann:       readOnly("Search file contents"),
			run:       runGrep,
		},
		{
			base: "list_files", title: "List files",
			desc: "List the files under the directory path, recursively, in path order, one path a line (default: every file of the workspace). " +
				"limit bounds how many are returned; when more exist, a separate notice says so. When there are none, a notice says the directory is empty or does not exist.",
			props: []prop{
				opt("path", str("Directory to list, e.g. \"notes\" (default: the whole workspace).")),
				opt("limit", integer("Most paths to return (default: all).", 1, math.MaxInt32)),
			},
			output:    []prop{req("paths", array(obj{{"type", "string"}})), opt("truncated", boolean("Set when more files exist than limit."))},
			spillable: true,
			ann:       readOnly("List files"),
			run:       runList,
		},
		{
			base: "delete_file", title: "Delete a file",
			desc: "Delete the file at path. Deleting a file that does not exist is not an error: the result says it did not exist. Directories are implicit: delete their files instead. " +
				"With if_hash, the delete applies only if the file still has that content hash (see stat_file). " +
				"The file stays in earlier commits ({{history}}, read_file's at, {{restore}})." + stale(""),
			props: []prop{
				req("path", str(pathDesc)),
				opt("if_hash", str(ifHashDesc)),
			},
			output: []prop{req("path", str("")), opt("existed", boolean("Whether the file existed before the call."))},
			ann:    mutating("Delete a file", true, true),
			run:    runDelete,
		},
		{
			base: "move_file", title: "Move a file",
			desc: "Rename (move) the file at from to the path to. Refused when the destination exists, unless overwrite is true. if_hash applies to the source file." + stale(" This holds for the source, and for a destination that exists."),
			props: []prop{
				req("from", str("Current path of the file.")),
				req("to", str("New path of the file.")),
				opt("overwrite", withDefault(boolean("Replace the destination file if it exists."), false)),
				opt("if_hash", str(ifHashDesc)),
			},
			output: []prop{req("from", str("")), req("to", str(""))},
			ann:    mutating("Move a file", true, false),
			run:    runMove,
		},
		{
			base: "checkpoint", title: "Name the current state",
			desc: "Give the current state of the workspace (its newest commit) a name, to read it later with at, compare it with {{diff}}, or go back to it with {{restore}}. " +
				"A name is 1 to 128 letters, digits, \".\", \"_\" or \"-\", not all digits, and unique in the workspace's thread.",
			props:  []prop{req("name", str("The checkpoint's name, e.g. before-refactor."))},
			output: commitOutput(),
			ann:    mutating("Name the current state", false, false),
			run:    runCheckpoint,
		},
		{
			base: "history", title: "List commits",
			desc: "List the commits of the workspace, newest first (at most limit, default 50), one a line: sequence number, time (UTC), checkpoint names (comma-separated) and summary, separated by tabs, with \"-\" for an empty column. " +
				"Every change is a commit; a sequence number or a checkpoint name can be given as at, from, to, and THREAD@N names commit N of another thread.",
			props:     []prop{opt("limit", withDefault(integer("Most commits to list, newest first.", 1, math.MaxInt32), defaultHistory))},
			output:    []prop{req("commits", array(obj{{"type", "object"}}))},
			spillable: true,
			ann:       readOnly("List commits"),
			run:       runHistory,
		},
		{
			base: "diff", title: "Compare two commits",
			desc: "Compare two commits of the workspace. Without path: the files that differ, one a line: \"added\", \"removed\" or \"changed\", a tab, and the path. " +
				"With path: the unified diff of that file between the two. When nothing differs, the result says \"no changes between FROM and TO\". " +
				"from and to are sequence numbers, checkpoint names or \"head\"; 0 is the empty workspace before the first commit. " +
				"To compare threads, name them: from \"main\", to \"try-b\" shows what try-b changed. " + refsSentence,
			props: []prop{
				req("from", commitRef("The older commit.")),
				opt("to", withDefault(commitRef("The newer commit (default \"head\")."), "head")),
				opt("path", str("Optional: a file to show the unified diff of.")),
			},
			output: []prop{
				opt("changes", array(obj{{"type", "object"}, {"properties", obj{{"path", obj{{"type", "string"}}}, {"kind", obj{{"type", "string"}, {"enum", []string{"added", "removed", "changed"}}}}}}})),
				opt("path", str("")), opt("diff", str("")),
			},
			spillable: true,
			ann:       readOnly("Compare two commits"),
			run:       runDiff,
		},
		{
			base: "restore", title: "Restore an earlier state",
			desc: "Make the workspace's files what they were at the earlier commit to (a sequence number or a checkpoint name), or what they are in another thread. " +
				"The restore is itself a new commit, so nothing is lost: history keeps every commit after it, and you can restore forward again. " + refsSentence,
			props:  []prop{req("to", commitRef("The commit to go back to."))},
			output: commitOutput(),
			ann:    mutating("Restore an earlier state", true, true),
			run:    runRestore,
		},
		{
			base: "list_threads", title: "List threads",
			desc: "List the threads of your workspace's scope, one a line: name, the sequence number of its newest commit (0 when it has none), and that commit's time (UTC, or \"-\"), separated by tabs; the thread this session works on is marked \"(current)\". " +
				"Each thread is a separate line of history of the same files; {{fork}} makes a new one and {{switch_thread}} moves this session to one. A token bound to one thread sees only that thread.",
			output: []prop{
				req("threads", array(obj{{"type", "object"}})),
				req("current", str("The thread this session works on.")),
			},
			ann: readOnly("List threads"),
			run: runListThreads,
		},
		{
			base: "fork", title: "Branch into a new thread",
			desc: "Make a new thread named name whose history starts at the commit from of this session's thread (a sequence number, a checkpoint name or \"head\", the default): nothing is copied, and later changes to either thread do not affect the other. " +
				"Use it to keep a state to compare with, or to try an alternative: fork, then {{switch_thread}} to it, work there, and compare with {{diff}} (from \"main\", to the new thread). " +
				"A name is 1 to 128 letters, digits, \".\", \"_\" or \"-\", not all digits, and must not be taken in the scope. A token bound to one thread cannot fork.",
			props: []prop{
				req("name", str("The new thread's name, e.g. try-outline-b.")),
				opt("from", withDefault(commitRef("The commit of this thread to start from (default \"head\")."), "head")),
			},
			output: []prop{req("thread", str("")), req("from", str("")), req("source", str("The thread forked.")), req("seq", obj{{"type", "integer"}})},
			ann:    mutating("Branch into a new thread", false, false),
			run:    runFork,
		},
		{
			base: "switch_thread", title: "Work on another thread",
			desc: "Move this session to another thread of your scope (one that {{fork}} made, or that list_threads lists): every later call reads and changes that thread, until you switch again. " +
				"Nothing is copied or changed. What you read on each thread is remembered, so a change to a file you read on a thread needs no new read when you come back, unless someone changed it meanwhile. " +
				"A token bound to one thread cannot switch.",
			props:  []prop{req("thread", str("The thread to work on, e.g. try-b (main is the usual default)."))},
			output: []prop{req("thread", str("The thread the session now works on.")), req("previous", str("The thread it worked on before.")), req("head", obj{{"type", "integer"}, {"description", "The sequence number of the thread's newest commit."}})},
			ann:    readOnly("Work on another thread"),
			run:    runSwitchThread,
		},
		{
			base: "merge", title: "Merge another thread's changes",
			desc: "Merge into thread into (default: this session's thread) the changes that thread from made since the two last had the same files: since one was forked from the other, or since the last merge between them. from is a thread name (its newest commit) or THREAD@REF (a sequence number or checkpoint name of it). " +
				"A file changed on one side only takes that side's version; a text file changed on both is merged line by line. Changes to the same lines, a file deleted on one side and changed on the other, and a binary file changed on both are conflicts. " +
				"With conflicts \"refuse\" (the default) a merge with conflicts changes nothing and lists them all, e.g. \"notes/plan.md lines 12-14 (both changed)\"; with \"markers\" each conflicting region is written between \"<<<<<<< INTO\", \"=======\" and \">>>>>>> FROM\" lines and committed, and you then edit the file to resolve them. " +
				"Set dry_run to see what a merge would do without changing anything. The merge is one commit, \"merged FROM@N\"; merging again when nothing is new changes nothing. " +
				"Typical use: {{fork}} a thread, work on it in another session, then merge it back. " +
				"A session whose changes wait for review cannot merge: a person merges a review by approving it.",
			props: []prop{
				req("from", str("The thread to merge from, e.g. try-b or try-b@17.")),
				opt("into", str("The thread to merge into (default: this session's thread).")),
				opt("conflicts", withDefault(obj{{"type", "string"}, {"enum", []string{"refuse", "markers"}}, {"description", "What a conflict does: refuse (commit nothing) or markers (write them and commit)."}}, "refuse")),
				opt("dry_run", boolean("Say what the merge would do, changing nothing.")),
			},
			output: []prop{
				req("commit", obj{{"type", "object"}}),
				req("from", obj{{"type", "object"}}), req("into", str("")), req("base", obj{{"type", "object"}}),
				req("paths", array(obj{{"type", "string"}})),
				opt("conflicts", array(obj{{"type", "object"}})),
				opt("dry_run", obj{{"type", "boolean"}}), unchangedProp,
			},
			noKey: true,
			ann:   mutating("Merge another thread's changes", true, true),
			run:   runMerge,
		},
	}
	out := make([]fileTool, 0, len(defs))
	for _, d := range defs {
		if !d.ann.ReadOnlyHint && !d.noKey {
			d.props = append(d.props, keyProp)
			d.desc += keySentence
		}
		names := make([]string, len(d.props))
		for i, pr := range d.props {
			names[i] = pr.name
		}
		out = append(out, fileTool{
			base: d.base,
			tool: &mcp.Tool{
				Name:         p(d.base),
				Title:        d.title,
				Description:  prefixed(d.desc, cfg.ToolPrefix),
				InputSchema:  inputSchema(d.props...),
				OutputSchema: outputSchema(d.spillable, d.output...),
				Annotations:  d.ann,
			},
			props: names,
			run:   d.run,
		})
	}
	return out
}

const (
	maxGrepLimit   = 10000
	defaultHistory = 50
)

func commitOutput() []prop {
	return []prop{
		req("seq", obj{{"type", "integer"}}),
		req("time", obj{{"type", "string"}, {"format", "date-time"}}),
		opt("checkpoints", array(obj{{"type", "string"}})),
		req("op", str("")), req("summary", str("")),
		opt("agent", str("")), opt("credential", str("")), opt("via", str("")),
		unchangedProp,
	}
}

// unchangedProp is set when a mutation changed nothing, so made no commit.
var unchangedProp = opt("unchanged", obj{{"type", "boolean"}, {"description", "True when nothing changed, so no commit was made."}})

// minLine is the lowest line number the decoder passes on: the API itself
// refuses bounds below 1, with DESIGN's message.
const minLine = math.MinInt32

func runRead(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	path, _ := a.path("path", true)
	var b satchel.Bounds
	b.Start, b.HasStart = a.integer("start_line", minLine, math.MaxInt32)
	b.End, b.HasEnd = a.integer("end_line", minLine, math.MaxInt32)
	numbered := a.boolean("numbered", true)
	at, hasAt := a.ref("at", false)
	maxChars, ok := a.integer("max_chars", 1, MaxReadChars)
	if !ok {
		maxChars = c.s.cfg.MaxInlineBytes
	}
	startChar, _ := a.integer("start_char", 0, math.MaxInt32)
	if err := a.err(); err != nil {
		return nil, err
	}
	r, err := c.reader(ctx, at, hasAt)
	if err != nil {
		return nil, err
	}
	res, err := r.ReadWith(ctx, path, satchel.ReadOptions{Bounds: b, Numbered: numbered, MaxChars: maxChars, StartChar: startChar, Binary: true})
	if err != nil {
		return nil, didYouMean(ctx, r, path, lineArgs(err))
	}
	if res.Binary {
		return binaryRead(path, res), nil
	}
	out := &outcome{text: res.Text, structured: res, untrusted: true, noSpill: true}
	if res.Notice != "" {
		out.notices = []string{res.Notice}
	}
	if res.Text == "" && b.HasStart && b.Start > 1 {
		// An empty slice: say whether the file ends before start_line, so
		// the model does not take it for empty lines.
		if fi, err := r.Stat(ctx, path); err == nil && int64(b.Start) > fi.Lines {
			out.notices = append(out.notices, fmt.Sprintf("[start_line %d is past the end: %s has %s]", b.Start, path, plural(int(fi.Lines), "line")))
		}
	}
	return out, nil
}

// boundsNames are the library's words for line bounds, in read_file's
// argument names.
var boundsNames = map[string]string{
	"start must be at least 1":     "start_line must be at least 1",
	"end must not be before start": "end_line must not be before start_line",
	"end requires start":           "end_line requires start_line",
}

// lineArgs renames a refusal of line bounds with the arguments' names.
func lineArgs(err error) error {
	var e *satchel.Error
	if errors.As(err, &e) && errors.Is(err, satchel.ErrInvalidRange) {
		if m, ok := boundsNames[e.Msg]; ok {
			return &satchel.Error{Kind: e.Kind, Msg: m}
		}
	}
	return err
}

// plural renders "1 line", "3 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// writeOpts returns the preconditions of a mutation, and its idempotency
// key.
func (c *call) writeOpts(ifHash string, has bool) []satchel.WriteOption {
	opts := c.keyOpts()
	if c.s.cfg.StaleWrites == StaleWarn {
		opts = append(opts, satchel.WarnStale(func(err error) { c.stale = append(c.stale, err.Error()) }))
	}
	if !has {
		return opts
	}
	return append(opts, satchel.IfHash(ifHash))
}

func runWrite(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	path, _ := a.path("path", true)
	content, _ := a.str("content", true)
	encoding, _ := a.str("encoding", false)
	ifHash, hasHash := a.str("if_hash", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	content, err := decodeContent(content, encoding)
	if err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	var cm satchel.Commit
	if err := ws.Write(ctx, path, content, append(c.writeOpts(ifHash, hasHash), satchel.Committed(&cm))...); err != nil {
		return nil, err
	}
	if cm.Unchanged {
		return unchanged(path+" already has this content", map[string]any{"path": path, "bytes": len(content), "hash": satchel.Hash(content)}), nil
	}
	return &outcome{
		text:       fmt.Sprintf("wrote %d bytes to %s", len(content), path),
		structured: map[string]any{"path": path, "bytes": len(content), "hash": satchel.Hash(content)},
		stored:     len(content),
	}, nil
}

func runAppend(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	path, _ := a.path("path", true)
	content, _ := a.str("content", true)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	if err := ws.Append(ctx, path, content, c.keyOpts()...); err != nil {
		return nil, err
	}
	return &outcome{
		text:       fmt.Sprintf("appended %d bytes to %s", len(content), path),
		structured: map[string]any{"path": path, "bytes": len(content)},
		stored:     len(content),
	}, nil
}

func runEdit(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	path, _ := a.path("path", true)
	oldText, _ := a.str("old_text", true)
	newText, _ := a.str("new_text", true)
	all := a.boolean("replace_all", false)
	ifHash, hasHash := a.str("if_hash", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	var cm satchel.Commit
	n, err := ws.StrReplace(ctx, path, oldText, newText, all, append(c.writeOpts(ifHash, hasHash), satchel.Committed(&cm))...)
	if err != nil {
		return nil, err
	}
	if cm.Unchanged {
		return unchanged("the replacement leaves "+path+" as it was", map[string]any{"path": path, "replaced": n}), nil
	}
	return &outcome{
		text:       fmt.Sprintf("replaced %s in %s", plural(n, "occurrence"), path),
		structured: map[string]any{"path": path, "replaced": n},
		stored:     n * len(newText),
	}, nil
}

func runStat(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	path, _ := a.path("path", true)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	fi, err := ws.Stat(ctx, path)
	if err != nil {
		return nil, didYouMean(ctx, ws, path, err)
	}
	fi.ModTime = fi.ModTime.UTC()
	text := fmt.Sprintf("path: %s\nsize: %d\nlines: %d\nmodified: %s\nhash: %s\ntype: %s",
		fi.Path, fi.Size, fi.Lines, fi.ModTime.Format(time.RFC3339Nano), fi.Hash, fi.Type)
	return &outcome{text: text, structured: fi}, nil
}

func runGlob(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	pattern, _ := a.str("pattern", true)
	at, hasAt := a.ref("at", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	r, err := c.reader(ctx, at, hasAt)
	if err != nil {
		return nil, err
	}
	paths, err := r.Glob(ctx, pattern)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return &outcome{text: "no files match " + pattern, structured: map[string]any{"paths": nonNil(paths)}}, nil
	}
	return &outcome{text: strings.Join(paths, "\n"), structured: map[string]any{"paths": nonNil(paths)}, untrusted: true}, nil
}

func runGrep(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	pattern, _ := a.str("pattern", true)
	under := a.dir("path")
	include, _ := a.str("include", false)
	limit, ok := a.integer("limit", 1, maxGrepLimit)
	if !ok {
		limit = satchel.DefaultGrepLimit
	}
	at, hasAt := a.ref("at", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	r, err := c.reader(ctx, at, hasAt)
	if err != nil {
		return nil, err
	}
	res, err := r.Grep(ctx, pattern, under, satchel.GrepOptions{Include: include, Limit: limit})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, m := range res.Matches {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:%d:%s", m.Path, m.Line, m.Text)
	}
	matches := nonNil(res.Matches)
	structured := map[string]any{"matches": matches, "truncated": res.Truncated}
	out := &outcome{
		text:       b.String(),
		structured: structured,
		untrusted:  true,
	}
	if len(res.Matches) == 0 && res.Stopped == "" {
		// The pattern is the caller's own: no content to wrap.
		out.text, out.untrusted = "no matches for "+pattern, false
	}
	if res.Truncated {
		out.notices = []string{fmt.Sprintf("[stopped at the limit of %d matches: there may be more. Narrow the pattern, path or include, or raise limit]", limit)}
	}
	if res.Stopped != "" {
		structured["stopped"] = res.Stopped
		out.notices = append(out.notices, "["+res.Stopped+"]")
	}
	if n := res.SkippedBinary; n > 0 {
		structured["skipped_binary"] = n
		out.notices = append(out.notices, skippedBinaryNotice(n))
	}
	return out, nil
}

func runList(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	under := a.dir("path")
	limit, hasLimit := a.integer("limit", 1, math.MaxInt32)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	o := satchel.ListOptions{}
	if hasLimit {
		o.Limit = limit + 1 // one more, to know whether there are more
	}
	paths, err := ws.List(ctx, under, o)
	if err != nil {
		return nil, err
	}
	truncated := hasLimit && len(paths) > limit
	if truncated {
		paths = paths[:limit]
	}
	out := &outcome{text: strings.Join(paths, "\n"), structured: map[string]any{"paths": nonNil(paths), "truncated": truncated}, untrusted: len(paths) > 0}
	switch {
	case len(paths) > 0:
	case under == "":
		out.notices = []string{"[no files: the workspace is empty]"}
	default:
		out.notices = []string{fmt.Sprintf("[no files: directory %s is empty or does not exist]", under)}
	}
	if truncated {
		out.notices = []string{fmt.Sprintf("[listed the first %d files: there are more. Raise limit, or list a directory]", limit)}
	}
	return out, nil
}

func runDelete(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	path, _ := a.path("path", true)
	ifHash, hasHash := a.str("if_hash", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	// Whether the file existed decides only the wording: the delete itself
	// is idempotent, and still checks if_hash and directories.
	existed, err := ws.Exists(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := ws.Delete(ctx, path, c.writeOpts(ifHash, hasHash)...); err != nil {
		return nil, err
	}
	if !existed {
		return &outcome{text: path + " did not exist; nothing was deleted", structured: map[string]any{"path": path, "existed": false}}, nil
	}
	return &outcome{text: "deleted " + path, structured: map[string]any{"path": path, "existed": true}}, nil
}

func runMove(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	from, _ := a.path("from", true)
	to, _ := a.path("to", true)
	overwrite := a.boolean("overwrite", false)
	ifHash, hasHash := a.str("if_hash", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	opts := c.writeOpts(ifHash, hasHash)
	if overwrite {
		opts = append(opts, satchel.Overwrite())
	}
	if err := ws.Move(ctx, from, to, opts...); err != nil {
		return nil, err
	}
	return &outcome{text: fmt.Sprintf("moved %s to %s", from, to), structured: map[string]any{"from": from, "to": to}}, nil
}

func runCheckpoint(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	name, _ := a.str("name", true)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	cm, err := ws.Checkpoint(ctx, name, c.keyOpts()...)
	if err != nil {
		return nil, err
	}
	cm.Time = cm.Time.UTC()
	return &outcome{text: fmt.Sprintf("checkpoint %s is commit %d", name, cm.Seq), structured: cm}, nil
}

// commitLine is how history shows a commit, as `satchel log` prints it.
// An empty column is "-", so that a model reading the line does not see
// two tabs as one.
func commitLine(c satchel.Commit) string {
	return fmt.Sprintf("%d\t%s\t%s\t%s", c.Seq, c.Time.UTC().Format(time.RFC3339), orDash(strings.Join(c.Checkpoints, ",")), orDash(c.Summary))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runHistory(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	limit, ok := a.integer("limit", 1, math.MaxInt32)
	if !ok {
		limit = defaultHistory
	}
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := ws.History(ctx, 0, limit)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(cs))
	for i := range cs {
		cs[i].Time = cs[i].Time.UTC()
		lines[i] = commitLine(cs[i])
	}
	return &outcome{text: strings.Join(lines, "\n"), structured: map[string]any{"commits": nonNil(cs)}, untrusted: true}, nil
}

func runDiff(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	from, _ := a.ref("from", true)
	to, hasTo := a.ref("to", false)
	if !hasTo {
		to = "head"
	}
	path, hasPath := a.path("path", false)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	if hasPath {
		d, err := ws.DiffFile(ctx, from, to, path)
		if err != nil {
			return nil, err
		}
		if d == "" {
			return &outcome{text: fmt.Sprintf("no changes between %s and %s in %s", from, to, path), structured: map[string]any{"path": path, "diff": d}}, nil
		}
		return &outcome{text: d, structured: map[string]any{"path": path, "diff": d}, untrusted: true}, nil
	}
	cs, err := ws.Diff(ctx, from, to)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return &outcome{text: fmt.Sprintf("no changes between %s and %s", from, to), structured: map[string]any{"changes": nonNil(cs)}}, nil
	}
	lines := make([]string, len(cs))
	for i, ch := range cs {
		lines[i] = ch.Kind + "\t" + ch.Path
	}
	return &outcome{text: strings.Join(lines, "\n"), structured: map[string]any{"changes": nonNil(cs)}, untrusted: true}, nil
}

func runRestore(ctx context.Context, c *call) (*outcome, error) {
	a := c.a
	to, _ := a.ref("to", true)
	if err := a.err(); err != nil {
		return nil, err
	}
	ws, err := c.workspace(ctx)
	if err != nil {
		return nil, err
	}
	cm, err := ws.Restore(ctx, to, c.keyOpts()...)
	if err != nil {
		return nil, err
	}
	cm.Time = cm.Time.UTC()
	if cm.Unchanged {
		return &outcome{text: fmt.Sprintf("unchanged: the head (commit %d) already has the files of %s", cm.Seq, to), structured: cm}, nil
	}
	return &outcome{text: fmt.Sprintf("restored %s as commit %d", to, cm.Seq), structured: cm}, nil
}

// unchanged is the outcome of a mutation that changed nothing, so made no
// commit: the text says so and why, the structured content has
// "unchanged": true.
func unchanged(why string, structured map[string]any) *outcome {
	structured["unchanged"] = true
	return &outcome{text: "unchanged: " + why, structured: structured}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
