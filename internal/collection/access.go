package collection

import "github.com/satchel-dev/satchel/internal/errs"

// Authorize checks that an agent may run op (one of the Op* constants) on
// a store, with the refusals of DESIGN §3:
//
//   - an unknown agent or store: ErrNotFound;
//   - a store the agent was not granted: ErrAccessDenied;
//   - set or remove on a shared store, even with rw: ErrReadOnly,
//     `store "x" is shared (read-only): writes are not allowed`;
//   - set or remove with read access: ErrAccessDenied;
//   - remove on a store that is not deletable: ErrAccessDenied,
//     `store "x" is not deletable`.
//
// ToolsFor lists exactly the tools for which Authorize returns nil.
func (p *Project) Authorize(agent, store, op string) error {
	a, err := p.Agent(agent)
	if err != nil {
		return err
	}
	s, err := p.Store(store)
	if err != nil {
		return err
	}
	access, ok := a.Stores[store]
	if !ok {
		return errs.New(errs.ErrAccessDenied, "agent %q has no access to store %q", agent, store)
	}
	switch op {
	case OpGet, OpQuery, OpList:
		return nil
	case OpSet, OpRemove:
		if s.Shared {
			return s.CheckWrite()
		}
		if access != AccessRW {
			return errs.New(errs.ErrAccessDenied, "agent %q has read access to store %q: %s needs rw", agent, store, op)
		}
		if op == OpRemove {
			return s.CheckRemove(false)
		}
		return nil
	}
	return errs.New(errs.ErrInvalidArgument, "unknown operation %q (operations: get, set, query, list, remove)", op)
}

// CheckWrite refuses an agent's write to a shared store (ErrReadOnly).
// Operators write shared stores through the CLI and the Go API, which do
// not call it.
func (s *Store) CheckWrite() error {
	if s.Shared {
		return errs.New(errs.ErrReadOnly, "store %q is shared (read-only): writes are not allowed", s.Name)
	}
	return nil
}

// CheckRemove refuses a remove from a store that is not deletable
// (ErrAccessDenied), unless force says an operator asked for it explicitly.
func (s *Store) CheckRemove(force bool) error {
	if !s.Deletable && !force {
		return errs.New(errs.ErrAccessDenied, "store %q is not deletable", s.Name)
	}
	return nil
}
