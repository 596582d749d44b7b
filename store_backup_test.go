package satchel_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestBackupUnderLoad backs a SQLite database up while writers run: the
// backup opens, reads every file of every thread, and holds every write
// acknowledged before the backup began.
func TestBackupUnderLoad(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	st, err := satchel.Open(ctx, filepath.Join(dir, "live.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	const writers = 4
	var (
		mu    sync.Mutex
		acked = map[string]string{} // path → content, once Write returned
		stop  = make(chan struct{})
		ready sync.WaitGroup // each writer's first 20 writes
		wg    sync.WaitGroup
		errc  = make(chan error, writers)
	)
	ready.Add(writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, err := st.Workspace(ctx, "load", fmt.Sprintf("w%d", w))
			if err != nil {
				errc <- err
				return
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p, c := fmt.Sprintf("f/%d", i%50), fmt.Sprintf("writer %d write %d\n", w, i)
				if err := ws.Write(ctx, p, c); err != nil {
					errc <- err
					return
				}
				mu.Lock()
				acked[fmt.Sprintf("w%d/%s", w, p)] = c
				mu.Unlock()
				if i == 19 {
					ready.Done()
				}
			}
		}()
	}
	ready.Wait()
	mu.Lock()
	before := make(map[string]string, len(acked))
	for k, v := range acked {
		before[k] = v
	}
	mu.Unlock()
	backup := filepath.Join(dir, "backup.db")
	berr := st.Backup(ctx, backup)
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if berr != nil {
		t.Fatalf("Backup: %v", berr)
	}
	fi, err := os.Stat(backup)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v, want mode 0600", fi, err)
	}

	b, err := satchel.Open(ctx, backup)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer b.Close()
	// The backup passes the storage check (satchel check --storage).
	rep, err := b.Check(ctx)
	if err != nil || len(rep.Faults) != 0 || rep.Threads != writers {
		t.Fatalf("check of the backup: %+v, %v", rep, err)
	}
	ts, err := b.Threads(ctx, "load")
	if err != nil || len(ts) != writers {
		t.Fatalf("backup threads: %v %v", ts, err)
	}
	// Every acknowledged write is there, or a later write of the same
	// writer to the same path.
	for k, want := range before {
		thread, p, _ := cut(k)
		ws, _ := b.Workspace(ctx, "load", thread)
		got, err := ws.Read(ctx, p)
		if err != nil {
			t.Fatalf("backup lacks %s: %v", k, err)
		}
		var gw, gi, ww, wi int
		fmt.Sscanf(got, "writer %d write %d", &gw, &gi)
		fmt.Sscanf(want, "writer %d write %d", &ww, &wi)
		if gw != ww || gi < wi {
			t.Fatalf("backup has %q at %s, older than the acknowledged %q", got, k, want)
		}
	}
	// Every retained commit of the backup reads.
	for _, th := range ts {
		ws, _ := b.Workspace(ctx, "load", th.Name)
		h, err := ws.History(ctx, 0, 0)
		if err != nil || int64(len(h)) != th.Head {
			t.Fatalf("history of %s: %d commits (%v), head %d", th.Name, len(h), err, th.Head)
		}
		for _, c := range h[:min(len(h), 5)] {
			snap, err := ws.At(ctx, fmt.Sprint(c.Seq))
			if err != nil {
				t.Fatal(err)
			}
			files, _ := snap.List(ctx, "", satchel.ListOptions{})
			for _, f := range files {
				if _, err := snap.Read(ctx, f); err != nil {
					t.Fatalf("%s@%d %s: %v", th.Name, c.Seq, f, err)
				}
			}
		}
	}

	if err := st.Backup(ctx, backup); !errors.Is(err, satchel.ErrExists) {
		t.Errorf("a backup over a file: %v", err)
	}
	mem, _ := satchel.Open(ctx, "memory:")
	defer mem.Close()
	if err := mem.Backup(ctx, filepath.Join(dir, "m.db")); !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("a backup of memory: %v", err)
	}
}

func cut(k string) (thread, path string, ok bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}
