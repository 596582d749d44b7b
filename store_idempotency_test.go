package satchel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestIdempotencyKeys retries every kind of keyed call on each backend:
// the retry returns the first result and changes nothing, the same key
// with other arguments is refused, and keys are per scope.
func TestIdempotencyKeys(t *testing.T) {
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			ws, err := st.Workspace(ctx, "a", "main")
			if err != nil {
				t.Fatal(err)
			}
			key := satchel.IdempotencyKey("k-append")
			var c1, c2 satchel.Commit
			if err := ws.Append(ctx, "log.txt", "one\n", key, satchel.Committed(&c1)); err != nil {
				t.Fatal(err)
			}
			if err := ws.Append(ctx, "log.txt", "one\n", key, satchel.Committed(&c2)); err != nil {
				t.Fatal(err)
			}
			if got, _ := ws.Read(ctx, "log.txt"); got != "one\n" {
				t.Fatalf("after a retried append the file is %q, want it once", got)
			}
			if c2.Seq != c1.Seq || c1.IdempotencyKey != "k-append" || c2.IdempotencyKey != "k-append" {
				t.Errorf("the retry reported %+v, the first call %+v", c2, c1)
			}
			err = ws.Append(ctx, "log.txt", "two\n", key)
			if !errors.Is(err, satchel.ErrIdempotencyKeyReused) || err.Error() != "idempotency key k-append was already used with different arguments" {
				t.Fatalf("same key, other text: %v", err)
			}
			// Another thread of the scope has keys of its own.
			other, _ := st.Workspace(ctx, "a", "other")
			if err := other.Append(ctx, "log.txt", "one\n", key); err != nil {
				t.Fatalf("same key, other thread: %v", err)
			}
			// Another scope has keys of its own.
			wb, _ := st.Workspace(ctx, "b", "main")
			if err := wb.Append(ctx, "log.txt", "one\n", key); err != nil {
				t.Fatalf("same key in another scope: %v", err)
			}
			if got, _ := wb.Read(ctx, "log.txt"); got != "one\n" {
				t.Fatalf("scope b: %q", got)
			}

			// An edit reports the count of its first call.
			if err := ws.Write(ctx, "f.txt", "x x\n", satchel.IdempotencyKey("k-write")); err != nil {
				t.Fatal(err)
			}
			ek := satchel.IdempotencyKey("k-edit")
			n1, err := ws.StrReplace(ctx, "f.txt", "x", "xy", true, ek)
			if err != nil || n1 != 2 {
				t.Fatalf("edit: %d, %v", n1, err)
			}
			n2, err := ws.StrReplace(ctx, "f.txt", "x", "xy", true, ek)
			if err != nil || n2 != 2 {
				t.Fatalf("retried edit: %d, %v", n2, err)
			}
			if got, _ := ws.Read(ctx, "f.txt"); got != "xy xy\n" {
				t.Fatalf("after a retried edit: %q", got)
			}
			// A call that changed nothing claims its key all the same.
			if err := ws.Write(ctx, "f.txt", "xy xy\n", satchel.IdempotencyKey("k-same")); err != nil {
				t.Fatal(err)
			}
			if err := ws.Write(ctx, "f.txt", "z\n", satchel.IdempotencyKey("k-same")); !errors.Is(err, satchel.ErrIdempotencyKeyReused) {
				t.Fatalf("a no-op's key reused: %v", err)
			}
			// Delete, move, checkpoint, restore and fork.
			mk := satchel.IdempotencyKey("k-move")
			if err := ws.Move(ctx, "f.txt", "g.txt", mk); err != nil {
				t.Fatal(err)
			}
			if err := ws.Move(ctx, "f.txt", "g.txt", mk); err != nil {
				t.Fatalf("retried move (the source is gone): %v", err)
			}
			cp1, err := ws.Checkpoint(ctx, "cp", satchel.IdempotencyKey("k-cp"))
			if err != nil {
				t.Fatal(err)
			}
			cp2, err := ws.Checkpoint(ctx, "cp", satchel.IdempotencyKey("k-cp"))
			if err != nil || cp2.Seq != cp1.Seq {
				t.Fatalf("retried checkpoint: %+v, %v (first %+v)", cp2, err, cp1)
			}
			dk := satchel.IdempotencyKey("k-del")
			if err := ws.Delete(ctx, "g.txt", dk); err != nil {
				t.Fatal(err)
			}
			head := mustHead(t, ws)
			if err := ws.Delete(ctx, "g.txt", dk); err != nil {
				t.Fatal(err)
			}
			r1, err := ws.Restore(ctx, "cp", satchel.IdempotencyKey("k-restore"))
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.Delete(ctx, "g.txt"); err != nil {
				t.Fatal(err)
			}
			r2, err := ws.Restore(ctx, "cp", satchel.IdempotencyKey("k-restore"))
			if err != nil || r2.Seq != r1.Seq || r1.Seq != head+1 {
				t.Fatalf("retried restore: %+v, %v (first %+v, head before %d)", r2, err, r1, head)
			}
			if ok, _ := ws.Exists(ctx, "g.txt"); ok {
				t.Fatal("the retried restore applied again")
			}
			fk := satchel.IdempotencyKey("k-fork")
			if _, err := ws.Fork(ctx, "cp", "forked", fk); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Fork(ctx, "cp", "forked", fk); err != nil {
				t.Fatalf("retried fork: %v", err)
			}
			if err := ws.Write(ctx, "x", "y", satchel.IdempotencyKey("bad key")); !errors.Is(err, satchel.ErrInvalidArgument) {
				t.Fatalf("a key with a space: %v", err)
			}
		})
	}
}

func mustHead(t *testing.T, ws *satchel.Workspace) int64 {
	t.Helper()
	h, err := ws.History(t.Context(), 0, 1)
	if err != nil || len(h) != 1 {
		t.Fatalf("history: %v", err)
	}
	return h[0].Seq
}

// TestIdempotencyKeysDocuments retries keyed sets and removes.
func TestIdempotencyKeysDocuments(t *testing.T) {
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			c, err := st.Collection(ctx, p, "a", "s", satchel.Force())
			if err != nil {
				t.Fatal(err)
			}
			k := satchel.IdempotencyKey("k-set")
			for i := range 2 {
				_, v, err := c.Set(ctx, map[string]any{"id": "d", "n": 1.0}, k)
				if err != nil || v != 1 {
					t.Fatalf("set %d: version %d, %v", i, v, err)
				}
			}
			_, _, err = c.Set(ctx, map[string]any{"id": "d", "n": 2.0}, k)
			if !errors.Is(err, satchel.ErrIdempotencyKeyReused) || !strings.Contains(err.Error(), "k-set was already used") {
				t.Fatalf("same key, other document: %v", err)
			}
			if _, v, err := c.Set(ctx, map[string]any{"id": "d", "n": 2.0}); err != nil || v != 2 {
				t.Fatalf("a set without a key: %d, %v", v, err)
			}
			rk := satchel.IdempotencyKey("k-remove")
			for i := range 2 {
				ok, err := c.Remove(ctx, "d", rk)
				if err != nil || !ok {
					t.Fatalf("remove %d: %v, %v", i, ok, err)
				}
			}
		})
	}
}

// TestIdempotencyKeyPurge: purging a scope deletes its keys, so a key
// given again afterwards applies again.
func TestIdempotencyKeyPurge(t *testing.T) {
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			ws, _ := st.Workspace(ctx, "a", "main")
			if err := ws.Append(ctx, "f", "x", satchel.IdempotencyKey("k")); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Purge(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			ws, _ = st.Workspace(ctx, "a", "main")
			if err := ws.Append(ctx, "f", "y", satchel.IdempotencyKey("k")); err != nil {
				t.Fatalf("a key after its scope was purged: %v", err)
			}
			if got, _ := ws.Read(ctx, "f"); got != "y" {
				t.Fatalf("f = %q, want y", got)
			}
		})
	}
}

// An agent bound to thread t3 that claimed key K9 first used to make
// another thread's write under K9 fail ("already used with different
// arguments"). Keys are per scope and caller's thread, for files and
// documents, on every backend.
func TestAttackIdempotencyKeySquatted(t *testing.T) {
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			k := satchel.IdempotencyKey("K9")
			t3, err := st.Workspace(ctx, "acme", "t3")
			if err != nil {
				t.Fatal(err)
			}
			main, err := st.Workspace(ctx, "acme", "main")
			if err != nil {
				t.Fatal(err)
			}
			if err := t3.Write(ctx, "squat.md", "t3", k); err != nil {
				t.Fatal(err)
			}
			if err := main.Write(ctx, "notes.md", "main", k); err != nil {
				t.Fatalf("main's write under the key t3 claimed: %v", err)
			}
			if got, err := main.Read(ctx, "notes.md"); err != nil || got != "main" {
				t.Fatalf("main's write: %q, %v", got, err)
			}
			if err := main.Write(ctx, "notes.md", "again", k); !errors.Is(err, satchel.ErrIdempotencyKeyReused) {
				t.Fatalf("main, the same key with other arguments: %v", err)
			}

			dk := satchel.IdempotencyKey("D9")
			on := func(thread string) *satchel.Collection {
				c, err := st.Collection(ctx, p, "acme", "s", satchel.Force(), satchel.CallerThread(thread))
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			if _, _, err := on("t3").Set(ctx, map[string]any{"id": "squat", "n": 1.0}, dk); err != nil {
				t.Fatal(err)
			}
			if _, v, err := on("main").Set(ctx, map[string]any{"id": "d", "n": 1.0}, dk); err != nil || v != 1 {
				t.Fatalf("main's set under the key t3 claimed: version %d, %v", v, err)
			}
			if _, _, err := on("main").Set(ctx, map[string]any{"id": "d", "n": 2.0}, dk); !errors.Is(err, satchel.ErrIdempotencyKeyReused) {
				t.Fatalf("main's set, the same key with other arguments: %v", err)
			}
		})
	}
}
