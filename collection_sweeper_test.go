package satchel_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/satchel-dev/satchel"
)

// TestRunSweeper: the sweeper deletes expired documents at its interval,
// not before, and stops with its context. Time is synctest's: the test
// waits a minute and a half without waiting at all.
func TestRunSweeper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		st, err := satchel.Open(ctx, "memory:")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		p, err := satchel.LoadProjectFS(fstest.MapFS{"stores/notes.json": {Data: []byte(`{
  "key": "{id}", "schema": { "id": { "type": "string" } }, "ttl": { "default": 20 }
}`)}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.Collection(ctx, p, "acme", "notes", satchel.IncludeExpired())
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Set(ctx, map[string]any{"id": "a"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			st.RunSweeper(ctx, 30*time.Second, func(err error) { t.Errorf("sweep: %v", err) })
		}()

		time.Sleep(25 * time.Second) // expired, not yet swept
		synctest.Wait()
		if _, err := c.Get(ctx, "a", false); err != nil {
			t.Fatalf("an expired document before the first sweep: %v", err)
		}
		time.Sleep(10 * time.Second) // the first sweep, at 30s, is done
		synctest.Wait()
		if _, err := c.Get(ctx, "a", false); !errors.Is(err, satchel.ErrNotFound) {
			t.Fatalf("an expired document after a sweep: %v", err)
		}
		cancel()
		<-done
	})
}
