package satchel

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// CheckThread refuses, with ErrNotFound, a thread that does not exist in
// scope (none of its workspaces has been written): `thread "mian" does not
// exist in scope default; threads: main, side-quest`. A Workspace reads a
// thread that does not exist as empty, since its first write creates it;
// tools that take a thread name from a person call CheckThread before they
// read, so a mistyped name is not shown as an empty workspace.
func (s *Store) CheckThread(ctx context.Context, scope, thread string) error {
	if err := ValidScope(scope); err != nil {
		return err
	}
	if err := ValidThreadName(thread); err != nil {
		return err
	}
	_, err := s.b.Thread(ctx, scope, thread, false)
	if !errors.Is(err, backend.ErrNoThread) {
		return err
	}
	ts, err := s.b.Threads(ctx, scope)
	if err != nil {
		return err
	}
	var names []string
	seen := map[string]bool{}
	for _, t := range ts {
		// A thread that holds only spills so far exists too.
		name := strings.TrimSuffix(t.Name, spillThreadSuffix)
		if name == thread {
			return nil
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return errs.New(errs.ErrNotFound, "thread %q does not exist in scope %s; the scope has no threads yet (the first write makes one)", thread, scope)
	}
	return errs.New(errs.ErrNotFound, "thread %q does not exist in scope %s; threads: %s", thread, scope, strings.Join(names, ", "))
}
