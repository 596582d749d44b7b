// Package backendof gives the conformance suite and the benchmarks the
// backend under a store, which package satchel does not export: the
// surfaces reach storage through the Go API only, and the layering test
// (internal/layering) keeps them from importing this package.
package backendof

import "github.com/satchel-dev/satchel/backend"

// Store returns the backend of st, a *satchel.Store. Package satchel sets
// it when it is initialised, so it is set in any program that has a store.
var Store func(st any) backend.Backend
