package luahost

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestReadAheadBounded: the parent reads a child's frames ahead of
// carrying them out, but holds no more than its bound: a child sending
// large frames is stopped by the pipe once the bound is reached, and
// every frame still comes out, in order, then the pipe's end.
func TestReadAheadBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int // of each frame's string
		queued int // frames held when the reader waits for room
	}{
		{"bytes", aheadBytes * 3 / 5, 1},
		{"frames", 10, aheadFrames},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			ra := startReadAhead(newConn(pr, io.Discard))
			defer ra.stop()
			total := tc.queued + 3
			go func() {
				w := newConn(nil, pw)
				for i := 1; i <= total; i++ {
					if w.send(&frame{id: uint64(i), op: opWrite, s: []string{strings.Repeat("x", tc.size)}}) != nil {
						return
					}
				}
				pw.Close()
			}()
			// The reader fills its bound and then waits, holding one frame
			// more; the pipe (synchronous) keeps the rest in the writer.
			deadline := time.Now().Add(30 * time.Second)
			for {
				n, full := ra.held()
				if full {
					if n != tc.queued {
						t.Fatalf("the reader waits for room holding %d frames, want %d", n, tc.queued)
					}
					break
				}
				if n > tc.queued {
					t.Fatalf("the reader holds %d frames, over its bound of %d", n, tc.queued)
				}
				if time.Now().After(deadline) {
					t.Fatalf("the reader never reached its bound (holding %d)", n)
				}
				time.Sleep(time.Millisecond)
			}
			for i := 1; i <= total; i++ {
				f, err := ra.next()
				if err != nil || f.id != uint64(i) || len(f.str(0)) != tc.size {
					t.Fatalf("frame %d: got %v, %v", i, f, err)
				}
			}
			if f, err := ra.next(); err != io.EOF {
				t.Fatalf("after the last frame: %v, %v, want EOF", f, err)
			}
		})
	}
}
