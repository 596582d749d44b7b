package engine

import "context"

// SameContent reports whether two entries hold the same content, comparing
// chunk references first and reading the content only when they differ in
// layout (a file history walks many commits; most share the entry).
func (e *Engine) SameContent(ctx context.Context, a, b *Entry) (bool, error) {
	return e.sameContent(ctx, a, b)
}
