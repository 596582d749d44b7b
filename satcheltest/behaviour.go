// Package satcheltest is satchel's conformance suite: run it on a backend
// to prove that satchel behaves on it exactly as DESIGN.md says. It is
// exported (like testing/fstest) so that the authors of a backend of their
// own can prove theirs:
//
//	func TestConformance(t *testing.T) {
//		satcheltest.Run(t, func(t *testing.T) backend.Backend { return mybackend.New() })
//	}
//
// Run it from an external test package (package mybackend_test): the suite
// imports package satchel, which links satchel's own backends.
package satcheltest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/backendtest"
)

// Run runs the whole conformance suite: the backend contract
// (backendtest.RunContract)
// and every behaviour of DESIGN.md through the satchel API on top of the
// backend (RunBehaviour, RunDocuments, RunQuotas). Then, for each
// optional capability of the contract that the backend offers and satchel
// has a fallback for, it runs the suite again with that capability
// hidden (Hide), in subtests named No<Capability>, side by side: the
// results must not differ. A backend is done when it passes.
func Run(t *testing.T, open func(t *testing.T) backend.Backend) {
	runWhole(t, open)
	runHidden(t, open)
}

// runWhole runs every part of the suite once.
func runWhole(t *testing.T, open func(t *testing.T) backend.Backend) {
	t.Run("Contract", func(t *testing.T) { backendtest.RunContract(t, open) })
	t.Run("Behaviour", func(t *testing.T) { RunBehaviour(t, open) })
	t.Run("Documents", func(t *testing.T) { RunDocuments(t, open) })
	t.Run("Quotas", func(t *testing.T) { RunQuotas(t, open) })
	t.Run("Changes", func(t *testing.T) { RunChanges(t, open) })
}

// RunBehaviour checks every file behaviour of DESIGN §2 (paths, lines,
// operations, bounds, fanout, versions) through the satchel API on a store
// over a fresh backend from open for each subtest.
func RunBehaviour(t *testing.T, open func(t *testing.T) backend.Backend) {
	s := &suite{open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T, st *satchel.Store, ws *satchel.Workspace)
	}{
		{"PathRules", s.pathRules},
		{"PathCheckedBeforeAnything", s.pathCheckedFirst},
		{"Directories", s.directories},
		{"WriteReadExact", s.writeReadExact},
		{"ReadBounds", s.readBounds},
		{"ReadNumbered", s.readNumbered},
		{"ReadMaxChars", s.readMaxChars},
		{"StrReplace", s.strReplace},
		{"Glob", s.glob},
		{"GlobRefusals", s.globRefusals},
		{"List", s.list},
		{"Grep", s.grep},
		{"ExistsDeleteMoveStat", s.existsDeleteMoveStat},
		{"Preconditions", s.preconditions},
		{"Bounds", s.bounds},
		{"BoundsConcurrent", s.boundsConcurrent},
		{"ConcurrentAppends", s.concurrentAppends},
		{"Batch", s.batch},
		{"Fanout", s.fanout},
		{"Versions", s.versions},
		{"ForkAndRestore", s.forkAndRestore},
		{"Retention", s.retention},
		{"GC", s.gc},
		{"ThreadsAndScopes", s.threadsAndScopes},
		{"LargeFiles", s.largeFiles},
		{"TwoStoresOneDatabase", s.twoStores},
		{"ScopesUsage", s.scopesUsage},
		{"Purge", s.purge},
		{"Archive", s.archive},
		{"DefaultRetention", s.defaultRetention},
		{"DeleteThreadStorage", s.deleteThreadStorage},
		{"IdempotencyKeys", s.idempotencyKeys},
		{"IdempotencyKeysPerThread", s.idempotencyKeysPerThread},
		{"StaleWrites", s.staleWrites},
		{"StaleWarn", s.staleWarn},
		{"StaleRace", s.staleRace},
		{"StaleFanout", s.staleFanout},
		{"StaleAppends", s.staleAppends},
		{"StaleRestore", s.staleRestore},
		{"ThreadRefs", s.threadRefs},
		{"Merge", s.merge},
		{"MergeRacing", s.mergeRacing},
		{"Shell", s.shell},
		{"Blame", s.blame},
		{"Review", s.review},
		{"ReviewFirst", s.reviewFirst},
		{"ReviewHidden", s.reviewHidden},
		{"FileRules", s.fileRules},
		{"FileRulesMerge", s.fileRulesMerge},
		{"GitOrigin", s.gitOrigin},
		{"SummaryRedaction", s.summaryRedaction},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each behaviour has a backend of its own
			st := satchel.New(s.open(t))
			t.Cleanup(func() { st.Close() })
			ws, err := st.Workspace(context.Background(), "default", "main")
			if err != nil {
				t.Fatal(err)
			}
			tc.fn(t, st, ws)
		})
	}
}

type suite struct {
	open func(t *testing.T) backend.Backend
}

var bg = context.Background()

// refused checks that err is of kind and has exactly msg.
func refused(t *testing.T, what string, err error, kind error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %q", what, msg)
		return
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %q is not of kind %v", what, err, kind)
	}
	if msg != "" && err.Error() != msg {
		t.Errorf("%s: error %q, want %q", what, err, msg)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func write(t *testing.T, ws *satchel.Workspace, files ...string) {
	t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		must(t, "write "+files[i], ws.Write(bg, files[i], files[i+1]))
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

func equalSlice(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}
