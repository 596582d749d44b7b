package spill

import (
	"context"
	"io"
)

// SaveFromReader reads r to its end and saves what it read with b, as the
// command "satchel spill save" does. It returns the locator and the hint
// for it.
func SaveFromReader(ctx context.Context, b Backend, owner, name string, r io.Reader) (Locator, string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", "", err
	}
	text := string(data)
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
