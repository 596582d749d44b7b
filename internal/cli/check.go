package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// checkProjectResult is what `check --json` prints.
type checkProjectResult struct {
	Dir    string   `json:"dir"`
	Stores []string `json:"stores"`
	Agents []string `json:"agents"`
}

func newCheckCmd(a *app) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "check",
		GroupID: groupCollections,
		Short:   "Validate a project's stores and agents",
		Long: `Check loads the definitions of the project directory --dir (default .):
stores/*.json and agents/*/agent.json. Every problem of every file is
reported at once, each with the file, the field path and what is wrong,
and the command exits 1; the database is not opened.

Prints the stores and agents found; with --json, {"dir": ..., "stores":
[...], "agents": [...]}.`,
		Example: `  satchel check
  satchel check --dir research`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := satchel.LoadProject(dir)
			if err != nil {
				return err
			}
			for _, s := range p.Skipped() {
				a.notice("%s", s)
			}
			r := checkProjectResult{Dir: dir, Stores: nonEmpty(p.Stores()), Agents: nonEmpty(p.Agents())}
			return a.emit(r, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "ok: %d stores (%s), %d agents (%s)\n",
					len(r.Stores), strings.Join(r.Stores, ", "), len(r.Agents), strings.Join(r.Agents, ", "))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "project `DIR` with stores/ and agents/")
	return cmd
}
