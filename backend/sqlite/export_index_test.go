package sqlite

import "context"

// OpenIndexEvery opens a database whose Appends write the commit_seq
// entries of every k commits (decision 0015): with k = 1 or 2 every test
// of the suites crosses seq_indexed.upto, so both halves of
// thread_commits and the catch-up are exercised.
func OpenIndexEvery(ctx context.Context, path string, k int64) (*Backend, error) {
	return open(ctx, path, options{indexEvery: k})
}
