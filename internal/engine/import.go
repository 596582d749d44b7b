package engine

import "context"

// The primitives an import needs to rebuild a tree exactly as an export
// recorded it (satchel's Import): a file's modified time as given, and a
// diff that sees a rewrite with the same content.

// PutAt is Put with the file's modified time given (Unix microseconds)
// instead of the transaction's.
func (tx *Tx) PutAt(ctx context.Context, path, content string, modTime int64) error {
	if err := tx.Put(ctx, path, content); err != nil {
		return err
	}
	tx.pending[path].ent.ModTime = modTime
	return nil
}

// DiffExact is Diff, except that a file whose content is the same in both
// trees but whose modified time differs is reported as Modified.
func (e *Engine) DiffExact(ctx context.Context, a, b *Snapshot) ([]Change, error) {
	return e.diff(ctx, a, b, true)
}
