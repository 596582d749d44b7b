package luahost

import (
	"io"
	"strings"
	"testing"
	"time"
)

// sendFrames writes frames with the given ops, their ids 1, 2, ... and a
// string of size bytes each, into a synchronous pipe, then closes it.
func sendFrames(ops []byte, size int) *readAhead {
	pr, pw := io.Pipe()
	go func() {
		w := newConn(nil, pw)
		for i, op := range ops {
			if w.send(&frame{id: uint64(i + 1), op: op, s: []string{strings.Repeat("x", size)}}) != nil {
				return
			}
		}
		pw.Close()
	}()
	return startReadAhead(newConn(pr, io.Discard))
}

// waitHeld waits until the reader has stopped reading ahead (for room,
// or after a frame the child waits for) and returns what it holds.
func waitHeld(t *testing.T, ra *readAhead) (frames int, full bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, full, reading := ra.held()
		if full || !reading {
			return n, full
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader never stopped (holding %d)", n)
		}
		time.Sleep(time.Millisecond)
	}
}

func takeFrames(t *testing.T, ra *readAhead, from, to, size int) {
	t.Helper()
	for i := from; i <= to; i++ {
		f, err := ra.next()
		if err != nil || f.id != uint64(i) || len(f.str(0)) != size {
			t.Fatalf("frame %d: got %v, %v", i, f, err)
		}
	}
}

// TestReadAheadBounded: the parent reads a child's posted frames ahead of
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
			total := tc.queued + 3
			ops := make([]byte, total)
			for i := range ops {
				ops[i] = opWrite | opAsync
			}
			ra := sendFrames(ops, tc.size)
			defer ra.stop()
			takeFrames(t, ra, 1, 1, tc.size) // read by the loop, which asks the reader to read on
			if n, full := waitHeld(t, ra); !full || n != tc.queued {
				t.Fatalf("the reader stopped holding %d frames (full %v), want %d and full", n, full, tc.queued)
			}
			takeFrames(t, ra, 2, total, tc.size)
			if f, err := ra.next(); err != io.EOF {
				t.Fatalf("after the last frame: %v, %v, want EOF", f, err)
			}
		})
	}
}

// TestReadAheadStopsAtAnsweredCall: the reader reads ahead only while
// the child goes on without answers; after a call the child waits for,
// it stops, and the loop reads the next frame itself.
func TestReadAheadStopsAtAnsweredCall(t *testing.T) {
	post := opWrite | opAsync
	ra := sendFrames([]byte{post, post, opPrint, opRead, post, opDone}, 3)
	defer ra.stop()
	takeFrames(t, ra, 1, 1, 3)
	if n, full := waitHeld(t, ra); full || n != 3 {
		t.Fatalf("the reader stopped holding %d frames (full %v), want the three up to the read", n, full)
	}
	takeFrames(t, ra, 2, 4, 3)
	if _, _, reading := ra.held(); reading {
		t.Fatalf("the reader reads on after a call the child waits for")
	}
	takeFrames(t, ra, 5, 6, 3)
	if f, err := ra.next(); err != io.EOF {
		t.Fatalf("after the last frame: %v, %v, want EOF", f, err)
	}
}
