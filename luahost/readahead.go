package luahost

import "sync"

// readAhead reads a child's frames for the run's loop. While the loop
// carries out a posted call (a write the child does not wait for), a
// goroutine of its own reads the frames after it, so that reading the
// pipe (its system calls, the copy of each frame into memory of its own)
// overlaps with the store's work rather than adding to it; otherwise the
// loop reads for itself, so that a call the child waits for is not handed
// from one goroutine to another on its way
// (docs/decisions/0154-lua-frames-read-ahead.md).
//
// The reader holds at most aheadFrames frames, and past the first of
// them at most aheadBytes: a child cannot make its parent hold more of
// what it sent than that, one frame read and waiting for room, and the
// frame being carried out. Once full, it waits until the frames held are
// down to a quarter of the bound before it reads again, and then reads
// many frames at once.
type readAhead struct {
	c     *conn
	mu    sync.Mutex
	start sync.Cond // the reader waits to be asked to read
	room  sync.Cond // the reader waits for room
	ready sync.Cond // the loop waits for a frame
	q     []*frame  // read, not yet taken, oldest first
	bytes int       // the sizes of q's frames
	err   error     // why reading ended; next returns it once q is empty

	// reading says the reader reads the pipe (the loop must not); it
	// stops after a frame the child waits for an answer to.
	reading               bool
	full, taking, stopped bool // the reader waits for room; the loop waits; stop was called
}

const (
	aheadFrames = 64
	aheadBytes  = 1 << 20
)

// startReadAhead returns c's frames in order until its reader ends or
// stop is called.
func startReadAhead(c *conn) *readAhead {
	ra := &readAhead{c: c}
	ra.start.L = &ra.mu
	ra.room.L = &ra.mu
	ra.ready.L = &ra.mu
	go ra.read()
	return ra
}

// unanswered says the child goes on after sending f without waiting.
func unanswered(f *frame) bool { return f.op&opAsync != 0 || f.op == opPrint }

func (ra *readAhead) read() {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for {
		for !ra.reading && !ra.stopped {
			ra.start.Wait()
		}
		if ra.stopped {
			return
		}
		ra.mu.Unlock()
		f, err := ra.c.recv()
		ra.mu.Lock()
		if err != nil {
			ra.err = err
			ra.reading = false
			ra.ready.Signal()
			return
		}
		if len(ra.q) > 0 && (len(ra.q) >= aheadFrames || ra.bytes+f.size > aheadBytes) {
			ra.full = true
			for ra.full && !ra.stopped {
				ra.room.Wait()
			}
		}
		if ra.stopped {
			return
		}
		ra.q = append(ra.q, f)
		ra.bytes += f.size
		if !unanswered(f) {
			ra.reading = false // nothing more comes until the loop answers it
		}
		if ra.taking {
			ra.ready.Signal()
		}
	}
}

// next returns the oldest frame not yet taken, waiting for one; once the
// child's frames are all taken, it returns why reading ended.
func (ra *readAhead) next() (*frame, error) {
	ra.mu.Lock()
	for len(ra.q) == 0 && ra.err == nil && ra.reading {
		ra.taking = true
		ra.ready.Wait()
		ra.taking = false
	}
	if len(ra.q) == 0 {
		err := ra.err
		ra.mu.Unlock()
		if err != nil {
			return nil, err
		}
		// The reader is idle: read the frame here.
		f, err := ra.c.recv()
		if err == nil && unanswered(f) {
			ra.ahead()
		}
		return f, err
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
	ra.mu.Unlock()
	return f, nil
}

// ahead asks the reader to read the frames after an unanswered one, which
// the loop is about to carry out.
func (ra *readAhead) ahead() {
	ra.mu.Lock()
	if !ra.reading && ra.err == nil && !ra.stopped {
		ra.reading = true
		ra.start.Signal()
	}
	ra.mu.Unlock()
}

// held says how many frames wait to be taken, whether the reader waits
// for room with one more, and whether it reads.
func (ra *readAhead) held() (frames int, full, reading bool) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return len(ra.q), ra.full, ra.reading
}

// stop ends the reading goroutine once its current read returns (the
// caller closes or kills what it reads).
func (ra *readAhead) stop() {
	ra.mu.Lock()
	ra.stopped = true
	ra.q = nil
	ra.start.Signal()
	ra.room.Signal()
	ra.mu.Unlock()
}
