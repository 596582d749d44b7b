package cli

import (
	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newSchemaCmd(a *app) *cobra.Command {
	cmd := newGroupCmd("schema", "Print the JSON Schemas of the definition formats",
		`Print a JSON Schema (draft 2020-12) of a definition format, for editors:
"store" for stores/<name>.json, "agent" for agents/<name>/agent.json. Save
it and point a file's "$schema" at it, or map the files to it in the
editor's settings. "satchel check" checks what a schema cannot say (names
match their files, key fields exist, refs name stores, ...).`,
		`  satchel schema store > .schemas/store.json
  satchel schema agent > .schemas/agent.json`)
	cmd.GroupID = groupCollections
	for _, s := range []struct {
		name, short, example string
		schema               func() []byte
	}{
		{"store", "Print the JSON Schema of stores/<name>.json", "  satchel schema store > .schemas/store.json", satchel.StoreDefinitionSchema},
		{"agent", "Print the JSON Schema of agents/<name>/agent.json", "  satchel schema agent > .schemas/agent.json", satchel.AgentDefinitionSchema},
	} {
		cmd.AddCommand(&cobra.Command{
			Use:     s.name,
			Short:   s.short,
			Long:    s.short + ", for editors.\nThe output is the same with --json.",
			Example: s.example,
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				b := s.schema()
				if len(b) == 0 || b[len(b)-1] != '\n' {
					b = append(b, '\n')
				}
				_, err := a.stdout.Write(b)
				return err
			},
		})
	}
	return cmd
}
