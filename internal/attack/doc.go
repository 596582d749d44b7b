// Package attack holds the load test of hostile input against the MCP
// HTTP server: for a minute, clients send the attacks docs/security.md
// lists (session floods, bodies over the limit and at it, a pattern that
// would pin a core, calls without a session) alongside normal traffic, and
// the test checks, from the server process's own metrics, that its
// resident memory stays under the bound the docs state, and that every
// normal call works.
//
// The attack tests of each surface live beside the code they guard, named
// TestAttack* (go test -run TestAttack ./... runs them all). This one is
// long: it runs only with SATCHEL_LONG_TESTS=1 (.ci/run sets it);
// SATCHEL_ATTACK_SECONDS sets its duration (default 60). It builds
// cmd/satchel and runs `satchel serve --http` with default flags as a
// process of its own. The package has no non-test code.
package attack
