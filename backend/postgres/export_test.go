package postgres

import "time"

// SetResolveTimeout sets how long Append tries to learn the outcome of a
// batch whose connection failed, and returns the function that restores it.
func SetResolveTimeout(d time.Duration) (restore func()) {
	old := resolveTimeout
	resolveTimeout = d
	return func() { resolveTimeout = old }
}
