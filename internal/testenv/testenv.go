// Package testenv decides what a test does when something it needs is
// missing: a service, a program, a capability, or the permission to run long.
//
// A test that cannot run says why in one line (t.Skip). When
// SATCHEL_TEST_STRICT is set, as .ci/run sets it, the same call fails the test
// instead, so CI cannot pass by skipping what it was meant to check.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// StrictVar is the environment variable that turns every Skip into a failure.
const StrictVar = "SATCHEL_TEST_STRICT"

// Strict reports whether skips are failures in this run.
func Strict() bool { return os.Getenv(StrictVar) != "" }

// Skip skips t with the reason, or fails it with the same reason when the run
// is strict.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if Strict() {
		t.Fatalf("%s (%s is set, so this skip is a failure)", why, StrictVar)
	}
	t.Skip(why)
}

// PostgresURL returns the URL of the test PostgreSQL server, from
// SATCHEL_TEST_POSTGRES, or skips t (fails it, when strict) if none is set.
func PostgresURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("SATCHEL_TEST_POSTGRES")
	if url == "" {
		Skip(t, "SATCHEL_TEST_POSTGRES is not set: PostgreSQL tests skipped")
	}
	return url
}

// Long skips t unless SATCHEL_LONG_TESTS is set (fails it, when strict).
func Long(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("SATCHEL_LONG_TESTS") == "" {
		Skip(t, "long test (%s): set SATCHEL_LONG_TESTS=1 to run it (.ci/run does)", what)
	}
}
