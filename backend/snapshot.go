package backend

import "context"

// Snapshotter is implemented by backends that can read a whole database
// as it was at one instant while writers go on (PostgreSQL: one
// REPEATABLE READ snapshot). Snapshot returns a backend whose reads all
// see that instant and whose writes fail, and a function that releases
// it (the snapshot holds server resources until then). satchel's Export
// reads through it, so that an export is consistent across threads.
type Snapshotter interface {
	Snapshot(ctx context.Context) (Backend, func(), error)
}
