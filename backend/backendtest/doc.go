// Package backendtest holds the conformance suites that every satchel
// backend must pass, in the manner of testing/fstest: a backend's own test
// calls them with a function that opens a fresh, empty backend, and they
// report every broken promise of the contract in package backend as a
// failing subtest.
//
//	func TestContract(t *testing.T) {
//		backendtest.RunContract(t, func(t *testing.T) backend.Backend {
//			b, err := mybackend.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return b
//		})
//	}
//
// RunContract (contract.go, its checks by area in contract_*.go) checks
// the storage contract itself: threads, the compare-and-swap of Append,
// logs, checkpoints, retention, garbage collection, settings and
// concurrency. It imports nothing of satchel but
// package backend, so that a backend written outside this module can run it.
package backendtest
