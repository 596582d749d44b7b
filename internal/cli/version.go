package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel/internal/version"
)

// newVersionCmd: satchel version prints the build's version and commit.
func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		GroupID: groupAdmin,
		Short:   "Print satchel's version and the commit it was built from",
		Long: `Version prints the module's version, the commit the binary was built from
and its time, and the Go toolchain, as the build recorded them ("satchel
--version" prints the first line). A binary built without version control
information (go build -buildvcs=false) has no commit. The MCP server
reports the same version to its clients.

With --json: {"version": ..., "commit": ..., "time": ..., "modified": ...,
"go": ...}.`,
		Example: `  satchel version
  satchel --version
  satchel version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := version.Get()
			return a.emit(in, func(w io.Writer) error {
				fmt.Fprintf(w, "satchel %s\n", in)
				commit := in.Commit
				if commit == "" {
					commit = "unknown (built without version control information)"
				} else if in.Modified {
					commit += " (with uncommitted changes)"
				}
				fmt.Fprintf(w, "commit %s\n", commit)
				if in.Time != "" {
					fmt.Fprintf(w, "committed %s\n", in.Time)
				}
				_, err := fmt.Fprintf(w, "built with %s\n", in.Go)
				return err
			})
		},
	}
}
