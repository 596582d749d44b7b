package luahost

import "sync"

// readAhead reads a child's frames in a goroutine of its own while the
// parent carries out the frames before them, so that reading the pipe
// (its system calls, and the copy of each frame into memory of its own)
// overlaps with the store's work rather than adding to it
// (docs/decisions/0154-lua-frames-read-ahead.md). It holds at most
// aheadFrames frames, and past the first of them at most aheadBytes: a
// child cannot make its parent hold more of what it sent than that, one
// frame read and waiting for room, and the frame being carried out.
//
// Once full, the reader waits until the frames held are down to a
// quarter of the bound before it reads again, and then reads many frames
// at once: the child, whose pipe has filled meanwhile, is woken once for
// many frames rather than once for each.
type readAhead struct {
	mu    sync.Mutex
	room  sync.Cond // the reader waits for room
	ready sync.Cond // the taker waits for a frame
	q     []*frame  // read, not yet taken, oldest first
	bytes int       // the sizes of q's frames
	err   error     // why reading ended; next returns it once q is empty

	full, taking, stopped bool // the reader waits; the taker waits; stop was called
}

const (
	aheadFrames = 64
	aheadBytes  = 1 << 20
)

// startReadAhead reads c's frames until its reader ends or stop is called.
func startReadAhead(c *conn) *readAhead {
	ra := &readAhead{}
	ra.room.L = &ra.mu
	ra.ready.L = &ra.mu
	go ra.read(c)
	return ra
}

func (ra *readAhead) read(c *conn) {
	for {
		f, err := c.recv()
		ra.mu.Lock()
		if err != nil {
			ra.err = err
			ra.ready.Signal()
			ra.mu.Unlock()
			return
		}
		if len(ra.q) > 0 && (len(ra.q) >= aheadFrames || ra.bytes+f.size > aheadBytes) {
			ra.full = true
			for ra.full && !ra.stopped {
				ra.room.Wait()
			}
		}
		if ra.stopped {
			ra.mu.Unlock()
			return
		}
		ra.q = append(ra.q, f)
		ra.bytes += f.size
		if ra.taking {
			ra.ready.Signal()
		}
		ra.mu.Unlock()
	}
}

// next returns the oldest frame not yet taken, waiting for one; once the
// child's frames are all taken, it returns why reading ended.
func (ra *readAhead) next() (*frame, error) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for len(ra.q) == 0 && ra.err == nil {
		ra.taking = true
		ra.ready.Wait()
		ra.taking = false
	}
	if len(ra.q) == 0 {
		return nil, ra.err
	}
	f := ra.q[0]
	ra.q[0] = nil
	ra.q = ra.q[1:]
	if len(ra.q) == 0 {
		ra.q = ra.q[:0:0]
	}
	ra.bytes -= f.size
	if ra.full && len(ra.q) <= aheadFrames/4 && ra.bytes <= aheadBytes/4 {
		ra.full = false
		ra.room.Signal()
	}
	return f, nil
}

// held says how many frames wait to be taken, and whether the reader
// waits for room with one more.
func (ra *readAhead) held() (frames int, full bool) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return len(ra.q), ra.full
}

// stop ends the reading goroutine once its current read returns (the
// caller closes or kills what it reads).
func (ra *readAhead) stop() {
	ra.mu.Lock()
	ra.stopped = true
	ra.q = nil
	ra.room.Signal()
	ra.mu.Unlock()
}
