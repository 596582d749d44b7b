package satcheltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
)

func (s *suite) bounds(t *testing.T, st *satchel.Store, _ *satchel.Workspace) {
	// Bytes are paths and contents as JSON strings: "a" is 3, "x\"y" is 6.
	must(t, "limits", st.SetLimits(bg, "default", "b", satchel.Limits{MaxBytes: 20, MaxFiles: 2, MaxFileBytes: 8}))
	ws, err := st.Workspace(bg, "default", "b")
	must(t, "workspace", err)
	must(t, "fits", ws.Write(bg, "a", "x\"y")) // 3 + 6 = 9
	err = ws.Write(bg, "b", "0123456789")
	refused(t, "per-file", err, satchel.ErrLimitExceeded, "limit exceeded: b would be 10 B, over the per-file limit of 8 B")
	must(t, "small file", ws.Write(bg, "b", "\n\n")) // 3 + 6: 18 in all
	refused(t, "maxFiles", ws.Write(bg, "c", ""), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 3 files, over maxFiles 2")
	must(t, "exactly maxBytes", ws.Write(bg, "b", "\n\n\n")) // 3 + 8: 20 in all
	refused(t, "maxBytes", ws.Write(bg, "b", "\n\n\n\n"), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 22 B, over maxBytes 20 B")
	refused(t, "maxBytes by append", ws.Append(bg, "b", "x"), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 21 B, over maxBytes 20 B")
	got, _ := ws.Read(bg, "b")
	equal(t, "refused whole", got, "\n\n\n")
	must(t, "invalid UTF-8 counts as \\ufffd", ws.Write(bg, "b", "\xff")) // 3 + 8: 20
	refused(t, "rename grows the path", ws.Move(bg, "b", "bb"), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 21 B, over maxBytes 20 B")
	// Other threads keep the defaults.
	other, _ := st.Workspace(bg, "default", "other")
	ol, err := other.Limits(bg)
	must(t, "limits", err)
	equal(t, "default maxFiles", ol.MaxFiles, int64(satchel.DefaultMaxFiles))
}

func (s *suite) boundsConcurrent(t *testing.T, st *satchel.Store, _ *satchel.Workspace) {
	must(t, "limits", st.SetLimits(bg, "default", "c", satchel.Limits{MaxFiles: 10}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	okCount := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, err := st.Workspace(bg, "default", "c")
			if err != nil {
				t.Error(err)
				return
			}
			for i := 0; i < 10; i++ {
				err := ws.Write(bg, fmt.Sprintf("g%d/f%d", g, i), "x")
				if err == nil {
					mu.Lock()
					okCount++
					mu.Unlock()
				} else if !errors.Is(err, satchel.ErrLimitExceeded) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	ws, _ := st.Workspace(bg, "default", "c")
	files, _ := ws.Glob(bg, "**")
	equal(t, "files under a concurrent maxFiles", len(files), 10)
	equal(t, "successful writes", okCount, 10)
}

func (s *suite) concurrentAppends(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := ws.Append(bg, "log.txt", fmt.Sprintf("g%d-%d\n", g, i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, _ := ws.Read(bg, "log.txt")
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		seen[l] = true
	}
	equal(t, "distinct lines", len(seen), goroutines*each)
	h, _ := ws.History(bg, 0, 0)
	equal(t, "one commit per append", len(h), goroutines*each)
}

func (s *suite) batch(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	err := ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "a.md", "one"); err != nil {
			return err
		}
		if _, err := b.StrReplace(ctx, "a.md", "one", "two", false); err != nil {
			return err
		}
		got, err := b.Read(ctx, "a.md")
		if err != nil || got != "two" {
			return fmt.Errorf("batch sees its own writes: %q %v", got, err)
		}
		return b.Append(ctx, "log", "x")
	})
	must(t, "batch", err)
	h, _ := ws.History(bg, 0, 0)
	equal(t, "one commit", len(h), 1)
	// Directories within a batch see the batch's own files.
	err = ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "dir/x", "x"); err != nil {
			return err
		}
		if err := b.Write(ctx, "dir", "y"); err == nil || err.Error() != "dir is a directory" {
			return fmt.Errorf("write over a directory made in the batch: %v", err)
		}
		if err := b.Delete(ctx, "dir/x"); err != nil {
			return err
		}
		return b.Write(ctx, "dir", "now a file")
	})
	must(t, "directories in a batch", err)
	got, _ := ws.Read(bg, "dir")
	equal(t, "file where the batch emptied a directory", got, "now a file")
	// A batch that fails commits nothing.
	err = ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "b.md", "x"); err != nil {
			return err
		}
		_, err := b.StrReplace(ctx, "a.md", "absent", "y", false)
		return err
	})
	refused(t, "failed batch", err, satchel.ErrAnchorNotFound, "anchor not found in a.md")
	ok, _ := ws.Exists(bg, "b.md")
	equal(t, "nothing half-written", ok, false)
}

func (s *suite) fanout(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	raceMsg := "write-write race on p.md: another arm of the same fanout already wrote it"
	// Whatever the order, a write-write race is reported to the later arm.
	for _, order := range []int{0, 1} {
		first := make(chan struct{})
		var later error
		err := ws.Fanout(bg,
			func(ctx context.Context, a *satchel.Workspace) error {
				if order == 1 {
					<-first
				}
				err := a.Write(ctx, "p.md", "arm 1")
				if order == 0 {
					close(first)
				} else {
					later = err
				}
				return err
			},
			func(ctx context.Context, a *satchel.Workspace) error {
				if order == 0 {
					<-first
				}
				err := a.Write(ctx, "p.md", "arm 2")
				if order == 1 {
					close(first)
				} else {
					later = err
				}
				return err
			})
		refused(t, "fanout race", err, satchel.ErrWriteRace, raceMsg)
		refused(t, "later arm", later, satchel.ErrWriteRace, raceMsg)
		got, _ := ws.Read(bg, "p.md")
		if want := fmt.Sprintf("arm %d", order+1); got != want {
			t.Errorf("the first arm's write stands: got %q, want %q", got, want)
		}
	}
	// Append and write of one path race too.
	first := make(chan struct{})
	err := ws.Fanout(bg,
		func(ctx context.Context, a *satchel.Workspace) error {
			defer close(first)
			return a.Append(ctx, "p.md", "x")
		},
		func(ctx context.Context, a *satchel.Workspace) error {
			<-first
			_, err := a.StrReplace(ctx, "p.md", "arm", "ARM", true)
			return err
		})
	refused(t, "append then edit", err, satchel.ErrWriteRace, raceMsg)
	// Concurrent appends are legal; an arm may rewrite its own paths; a
	// later fanout starts a fresh record.
	arms := make([]func(context.Context, *satchel.Workspace) error, 8)
	for i := range arms {
		arms[i] = func(ctx context.Context, a *satchel.Workspace) error {
			for j := 0; j < 5; j++ {
				if err := a.Append(ctx, "shared.log", fmt.Sprintf("%d.%d\n", i, j)); err != nil {
					return err
				}
			}
			own := fmt.Sprintf("own/%d.md", i)
			if err := a.Write(ctx, own, "1"); err != nil {
				return err
			}
			if err := a.Write(ctx, own, "2"); err != nil {
				return err
			}
			return a.Delete(ctx, own)
		}
	}
	must(t, "legal fanout", ws.Fanout(bg, arms...))
	got, _ := ws.Read(bg, "shared.log")
	equal(t, "appends from every arm", strings.Count(got, "\n"), 40)
	must(t, "fresh record", ws.Fanout(bg, func(ctx context.Context, a *satchel.Workspace) error { return a.Write(ctx, "p.md", "again") }))
}
