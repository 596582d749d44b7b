// Package spill keeps large tool results out of a model's context without
// losing them (DESIGN §4).
//
// An agent's tool can return far more text than is worth putting in a
// prompt: a grep over a repository, a whole log. A [Policy] decides, per
// result, whether to spill it; when it does, it saves the full text with a
// [Backend] and gives the model a preview instead: the head and the tail of
// the text around a notice that says how much was left out, where it is and
// how to read it:
//
//	policy := spill.Policy{MaxInlineBytes: 64 << 10}
//	r := policy.Apply(ctx, backend, sessionID, "grep", "grep.txt", output)
//	// r.Text is output itself when it is small, else a preview like
//	//   <the first 4/5 of the budget>
//	//
//	//   (Omitted 912345 bytes. Full result stored at: spill/Xb9…-grep.txt.
//	//   Read it with read_file (path "spill/Xb9…-grep.txt", start_line 1,
//	//   end_line 1400; the file has 20113 lines).)
//	//
//	//   <the last 1/5>
//
// # The decision
//
// A result is spilled when it is longer than MaxInlineBytes (default 65,536;
// a result of exactly that size stays inline), is valid UTF-8 (binary stays
// as it is: a byte preview of it would help nobody), is not the output of
// the tool that reads spills back (so read → spill → read cannot loop), and
// is not already a preview (a result is spilled at most once). The preview
// keeps 4 bytes of head for each byte of tail, cuts both on UTF-8
// boundaries and, notice included, never exceeds MaxInlineBytes. If the save
// fails, the result stays inline and the failure is logged.
//
// # Backends
//
// [Workspace] writes the spill as a file of the agent's own thread,
// "spill/<random>-<name>", which the agent reads with the read_file tool it
// already has, in line ranges. The MCP server uses it: it needs no disk of
// its own and an agent can only open what its tools reach.
//
// [FS] writes "<root>/session-<sha256(owner)>/<random>-<name>" on the host,
// for programs that read host files. It is written to be safe on a shared
// machine: the owner is hashed, names are sanitised with [SafeName],
// directories are 0700 and files 0600 whatever the umask, files are created
// exclusively so a planted file or symlink is an error rather than an
// overwrite, and a failed write leaves no partial file. It never deletes
// anything on its own; [Prune] is the operator's cleanup.
//
// Both give a hint ([Backend.Hint]) that names the tool and the concrete
// path; Fetch returns the saved text byte for byte. A backend of your own
// only has to implement the three methods of [Backend].
//
// # Commands
//
// [SaveFromReader], [FetchTo] and [Prune] are what the "satchel spill"
// commands call.
package spill
