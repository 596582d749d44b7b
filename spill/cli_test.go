package spill

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestSaveFromReaderAndFetchTo(t *testing.T) {
	f := newFS(t)
	text := strings.Repeat("über\n", 1000)
	loc, hint, err := SaveFromReader(context.Background(), f, "op", "notes.md", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hint, `"`+string(loc)+`"`) || !strings.Contains(hint, "the file has 1000 lines") {
		t.Fatalf("hint %q", hint)
	}
	var out bytes.Buffer
	if err := FetchTo(context.Background(), f, loc, &out); err != nil || out.String() != text {
		t.Fatalf("FetchTo: %d bytes, %v", out.Len(), err)
	}
	missing := Locator(strings.TrimSuffix(string(loc), "notes.md") + "other.md")
	if err := FetchTo(context.Background(), f, missing, &out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FetchTo missing: %v", err)
	}
}
