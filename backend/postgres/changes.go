package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// changesChannel is the channel of satchel's notifications: every write
// (an Append, a fork, a document's set or removal) sends one once it has
// committed, whose payload is its scope when known, else empty. Not in
// the write's own transaction: a NOTIFY takes a lock that serializes the
// commits of every transaction that sends one, which cut 16 writers'
// commits by 60 to 80% (decision 0137); sent after, by one goroutine of
// the process, they cost the writers nothing measurable.
const changesChannel = "satchel_changes"

// notifyCommits: commits send their notification (a variable for the
// benchmark that measures what it costs, BenchmarkAppendNotify).
var notifyCommits = true

// WatchChanges implements backend.ChangeWatcher: a connection of its
// own, outside the pool, LISTENs on changesChannel. When it is lost, a
// new one is made (a second later, and so on) and changed is called with
// "", since what happened meanwhile is not known.
func (b *Backend) WatchChanges(ctx context.Context, changed func(scope string)) error {
	conn, err := b.listen(ctx)
	if err != nil {
		return err
	}
	go func() {
		defer func() {
			if conn != nil {
				_ = conn.Close(context.Background())
			}
		}()
		for {
			if conn == nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				if conn, err = b.listen(ctx); err != nil {
					conn = nil
					continue
				}
				changed("")
			}
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				_ = conn.Close(context.Background())
				conn = nil
				continue
			}
			changed(n.Payload)
		}
	}()
	return nil
}

// listen opens a connection that LISTENs on changesChannel.
func (b *Backend) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// notifier sends the notifications of the writes, after they commit, off
// the writer's path: one batch at a time, those that came meanwhile
// merged (one a scope).
type notifier struct {
	mu      sync.Mutex
	pending map[string]bool
	running bool
}

// changed notes a committed change of scope ("" when not known) and
// sends its notification soon.
func (b *Backend) changed(scope string) {
	n := &b.notes
	n.mu.Lock()
	if n.pending == nil {
		n.pending = map[string]bool{}
	}
	n.pending[scope] = true
	if n.running {
		n.mu.Unlock()
		return
	}
	n.running = true
	n.mu.Unlock()
	go func() {
		for {
			n.mu.Lock()
			scopes := n.pending
			n.pending = nil
			if len(scopes) == 0 {
				n.running = false
				n.mu.Unlock()
				return
			}
			n.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			batch := &pgx.Batch{}
			for s := range scopes {
				batch.Queue("SELECT pg_notify($1, $2)", changesChannel, s)
			}
			_ = b.pool.SendBatch(ctx, batch).Close() // a pool closed meanwhile: nobody listens here
			cancel()
		}
	}()
}
