// Package attack holds the load test of hostile input against the MCP
// HTTP server and the inspector beside it: for a minute, clients send the
// attacks docs/security.md lists (session floods, bodies over the limit
// and at it, slow bodies, a pattern that would pin a core, calls without a
// session, protocol versions the server does not speak, inspector sign-in
// floods and live stream floods) alongside normal traffic, and the test
// checks, from the server process's own metrics, that its resident memory
// stays under the bound the docs state, that every normal call works,
// that every normal write is there afterwards, and that the operator's
// inspector session outlives the floods.
//
// The attack tests of each surface live beside the code they guard, named
// TestAttack* (go test -run TestAttack ./... runs them all). This one is
// long: it runs only with SATCHEL_LONG_TESTS=1 (.ci/run sets it);
// SATCHEL_ATTACK_SECONDS sets its duration (default 60). It builds
// cmd/satchel and runs `satchel serve --http --ui` with default flags as
// a process of its own. The package has no non-test code.
package attack
