package sqlite

import (
	"context"
	"errors"
	rtmetrics "runtime/metrics"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// TestAppendStartsNoGoroutine: an Append runs on the appender's connection,
// not in a *sql.Tx, which starts a goroutine for itself and one for each
// query inside it (two an Append), each able to wake an idle processor.
func TestAppendStartsNoGoroutine(t *testing.T) {
	ctx := context.Background() // the engine's: its batches cannot be cancelled
	b := openTest(t, options{})
	defer b.Close()
	th, err := b.CreateThread(ctx, "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	created := func() uint64 {
		s := []rtmetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		rtmetrics.Read(s)
		return s[0].Value.Uint64()
	}
	const appends = 64
	before := created()
	for seq := int64(1); seq <= appends; seq++ {
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}"), Pack: []byte("p")}})
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The backend's own goroutines (checkpoints, the process's lease)
	// may start a few meanwhile; a transaction's start one an Append.
	if n := created() - before; n >= appends/4 {
		t.Errorf("%d Appends started %d goroutines", appends, n)
	}
}

// TestAppenderReplacesItsConnection: the appender's connection closed
// under it is replaced at the next Append, which commits; what the head
// cache remembered of the old connection is not trusted on the new one.
func TestAppenderReplacesItsConnection(t *testing.T) {
	ctx := t.Context()
	b := openTest(t, options{})
	defer b.Close()
	th, err := b.CreateThread(ctx, "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	appendAt := func(seq int64) error {
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte{byte(seq)}}})
		if err != nil {
			return err
		}
		return res[0].Err
	}
	if err := appendAt(1); err != nil {
		t.Fatal(err)
	}
	b.wmu.Lock()
	old := b.app.conn
	old.Close()
	b.wmu.Unlock()
	if err := appendAt(2); err != nil {
		t.Fatalf("append after the connection closed: %v", err)
	}
	if b.app.conn == old {
		t.Fatal("the closed connection was kept")
	}
	if err := appendAt(2); !errors.Is(err, backend.ErrStale) {
		t.Fatalf("append at a taken seq: %v, want ErrStale", err)
	}
	if c, ok, err := b.Head(ctx, th.ID); err != nil || !ok || c.Seq != 2 {
		t.Fatalf("head: %+v %v %v, want seq 2", c, ok, err)
	}
}
