package backend

import "context"

// FileBackuper is implemented by backends that can copy their whole
// database, consistently, while writers run, into one new file (SQLite:
// VACUUM INTO). BackupTo writes path, which must not exist, with mode
// 0600 from its first byte, checks the copy's integrity, and removes it
// again when anything fails.
type FileBackuper interface {
	BackupTo(ctx context.Context, path string) error
}
