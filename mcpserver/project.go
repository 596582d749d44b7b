package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/satchel-dev/satchel"
)

// ProjectCollections serves the typed collections of a project (stores/
// and agents/, loaded with satchel.LoadProject) from st: each agent gets
// the generated tools of the stores its agent.json grants (DESIGN §3), and
// each call runs through Store.CallCollectionTool in the caller's scope,
// which checks the agent's access again (a shared store refuses writes,
// `store "x" is shared (read-only): writes are not allowed`) and validates
// the arguments.
func ProjectCollections(st *satchel.Store, p *satchel.Project) Collections {
	return projectCollections{st: st, p: p}
}

type projectCollections struct {
	st *satchel.Store
	p  *satchel.Project
}

func (c projectCollections) Tools(agent string) ([]Tool, error) {
	ts, err := c.p.Tools(agent)
	if err != nil {
		return nil, err
	}
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = Tool{
			Name: t.Name, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			ReadOnly: t.ReadOnly, Destructive: t.Destructive, Idempotent: t.Idempotent,
		}
	}
	return out, nil
}

func (c projectCollections) Call(ctx context.Context, id Identity, tool string, args json.RawMessage) (any, error) {
	a := satchel.Actor{Agent: id.Agent, Credential: id.Credential, Via: "mcp:" + tool, Client: id.Client, ClientVersion: id.ClientVersion}
	return c.st.CallCollectionTool(ctx, c.p, id.Scope, a, tool, args, satchel.CallerThread(id.Thread))
}

// skipped lists the project entries the load did not read (special
// files), which New logs.
func (c projectCollections) skipped() []string { return c.p.Skipped() }
