package collection

import (
	"errors"
	"testing"

	"github.com/satchel-dev/satchel/internal/errs"
)

func TestAuthorize(t *testing.T) {
	p := mustLoad(t, map[string]string{
		"stores/notes.json":    `{"key": "{id}", "schema": {"id": {"type": "string"}}, "deletable": true}`,
		"stores/profiles.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}, "shared": true, "deletable": true}`,
		"stores/logs.json":     `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"agents/w/agent.json":  `{"stores": {"notes": "rw", "profiles": "rw", "logs": "rw"}}`,
		"agents/r/agent.json":  `{"stores": {"notes": "read"}}`,
	})
	tests := []struct {
		agent, store, op string
		kind             error
		msg              string
	}{
		{"w", "notes", OpSet, nil, ""},
		{"w", "notes", OpRemove, nil, ""},
		{"w", "profiles", OpGet, nil, ""},
		{"w", "profiles", OpSet, errs.ErrReadOnly, `store "profiles" is shared (read-only): writes are not allowed`},
		{"w", "profiles", OpRemove, errs.ErrReadOnly, `store "profiles" is shared (read-only): writes are not allowed`},
		{"w", "logs", OpRemove, errs.ErrAccessDenied, `store "logs" is not deletable`},
		{"r", "notes", OpQuery, nil, ""},
		{"r", "notes", OpSet, errs.ErrAccessDenied, `agent "r" has read access to store "notes": set needs rw`},
		{"r", "logs", OpGet, errs.ErrAccessDenied, `agent "r" has no access to store "logs"`},
		{"r", "nope", OpGet, errs.ErrNotFound, `store "nope" not found (stores: logs, notes, profiles)`},
		{"x", "notes", OpGet, errs.ErrNotFound, `agent "x" not found (agents: r, w)`},
		{"w", "notes", "drop", errs.ErrInvalidArgument, `unknown operation "drop" (operations: get, set, query, list, remove)`},
	}
	for _, tc := range tests {
		err := p.Authorize(tc.agent, tc.store, tc.op)
		if tc.kind == nil {
			if err != nil {
				t.Errorf("%s %s %s: %v", tc.agent, tc.store, tc.op, err)
			}
			continue
		}
		if !errors.Is(err, tc.kind) || err.Error() != tc.msg {
			t.Errorf("%s %s %s: got %v, want %v %q", tc.agent, tc.store, tc.op, err, tc.kind, tc.msg)
		}
	}
	// ToolsFor lists exactly what Authorize allows.
	for _, agent := range p.AgentNames {
		tools, _ := p.ToolsFor(agent)
		listed := map[string]bool{}
		for _, tool := range tools {
			listed[tool.Store+"/"+tool.Op] = true
		}
		for _, store := range p.StoreNames {
			for _, op := range []string{OpGet, OpSet, OpQuery, OpList, OpRemove} {
				if ok := p.Authorize(agent, store, op) == nil; ok != listed[store+"/"+op] {
					t.Errorf("%s %s %s: Authorize %v, listed %v", agent, store, op, ok, listed[store+"/"+op])
				}
			}
		}
	}
	if err := p.Stores["logs"].CheckRemove(true); err != nil {
		t.Errorf("forced remove: %v", err)
	}
}
