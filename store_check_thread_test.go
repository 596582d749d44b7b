package satchel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel"
)

func TestCheckThread(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.CheckThread(ctx, "default", "main")
	if want := `thread "main" does not exist in scope default; the scope has no threads yet (the first write makes one)`; !errors.Is(err, satchel.ErrNotFound) || err.Error() != want {
		t.Errorf("an empty scope: %v", err)
	}
	for _, th := range []string{"main", "side-quest"} {
		ws, _ := st.Workspace(ctx, "default", th)
		if err := ws.Write(ctx, "a.md", th); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CheckThread(ctx, "default", "main"); err != nil {
		t.Errorf("an existing thread: %v", err)
	}
	err = st.CheckThread(ctx, "default", "mian")
	if want := `thread "mian" does not exist in scope default; threads: main, side-quest`; !errors.Is(err, satchel.ErrNotFound) || err.Error() != want {
		t.Errorf("a mistyped thread: %v", err)
	}
}
