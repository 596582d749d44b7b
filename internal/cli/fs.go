package cli

import "github.com/spf13/cobra"

// newFSCmd is `satchel fs`, the file operations of DESIGN §2.3 on the
// workspace of --scope and --thread.
func newFSCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("fs", "Read and change the files of a workspace",
		`The file operations of a workspace (--scope, --thread): every change is a
commit, every path is checked (relative, no . or .. segments, no
backslashes, ...) before anything is read or written, and the read-side
commands can look at any retained commit with --at REF, where REF is a
sequence number or a checkpoint name.

Plain output is the result alone: read prints the content exactly, and
glob, grep and ls print one result a line. --json prints one JSON value.`,
		`  satchel fs write notes/a.md "hello"
  satchel fs read notes/a.md --start 1 --end 20 --numbered
  satchel fs edit notes/a.md --old hello --new goodbye
  satchel fs grep TODO --under notes --include '*.md'
  satchel fs import ./docs --under docs`)
	cmd.GroupID = groupFiles
	cmd.AddCommand(
		newFSWriteCmd(a),
		newFSAppendCmd(a),
		newFSReadCmd(a),
		newFSEditCmd(a),
		newFSGlobCmd(a),
		newFSGrepCmd(a),
		newFSLsCmd(a),
		newFSStatCmd(a),
		newFSExistsCmd(a),
		newFSRmCmd(a),
		newFSMvCmd(a),
		newFSImportCmd(a),
		newFSExportCmd(a),
	)
	return cmd
}
