package spill

import (
	"context"
	"io"

	"github.com/satchel-dev/satchel/internal/bounded"
)

// MaxSaveBytes bounds what SaveFromReader saves: the per-file limit of a
// workspace (satchel.DefaultMaxFileBytes), whichever backend keeps it.
const MaxSaveBytes = 64 << 20

// SaveFromReader reads r to its end, refusing (satchel.ErrLimitExceeded)
// an input over MaxSaveBytes once it has read one byte past it, and saves
// what it read with b, as the command "satchel spill save" does. It returns the locator and the hint
// for it.
func SaveFromReader(ctx context.Context, b Backend, owner, name string, r io.Reader) (Locator, string, error) {
	text, err := bounded.ReadString(r, MaxSaveBytes, 0, "standard input", "the spill limit")
	if err != nil {
		return "", "", err
	}
	loc, err := b.Save(ctx, owner, name, text)
	if err != nil {
		return "", "", err
	}
	return loc, b.Hint(loc, text), nil
}

// FetchTo writes the spill at loc to w, byte for byte, as the command
// "satchel spill fetch" does. The error is b.Fetch's, unchanged, or w's.
func FetchTo(ctx context.Context, b Backend, loc Locator, w io.Writer) error {
	text, err := b.Fetch(ctx, loc)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, text)
	return err
}
