package engine

import (
	"sync"
	"unsafe"
)

// tails makes appending to a file's last chunk cost the appended text, not
// the chunk: the chunk that an append makes (old last chunk + text) is kept
// in a buffer with room after it, and the next append to it writes its text
// into that room, sharing the bytes before it. A log grown by 40-byte lines
// then copies 40 bytes an append instead of its last chunk (up to 32 KiB),
// and the versions of that chunk share one buffer.
//
// The bytes of a buffer below used are never written again (strings alias
// them); the room above used is written only under mu, by the first append
// that extends exactly the newest string. Any other (an older version, a
// string this process did not make) is copied, as before.
type tails struct {
	mu sync.Mutex
	m  map[*byte]*tailBuf // by the address of the buffer's first byte
}

type tailBuf struct {
	buf  []byte
	used int
}

// maxTails bounds how many buffers are remembered (the map is cleared when
// full: forgetting one only costs a copy).
const maxTails = 256

// join returns a + b, reusing the room after a when a is the newest string
// of a buffer.
func (t *tails) join(a, b string) string {
	if len(a) == 0 || len(b) == 0 || len(a) >= chunkMax {
		return a + b // a longer string is cut: its last chunk is not at its start
	}
	n := len(a) + len(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if tb := t.m[unsafe.StringData(a)]; tb != nil && tb.used == len(a) && cap(tb.buf)-tb.used >= len(b) {
		buf := append(tb.buf[:tb.used:cap(tb.buf)], b...)
		tb.used = n
		return unsafe.String(unsafe.SliceData(buf), n)
	}
	// Room for as much again (a chunk is copied O(log n) times as it
	// grows), but not past the longest chunk.
	buf := make([]byte, n, max(n, min(n+max(n, 256), chunkMax+chunkMax/8)))
	copy(buf, a)
	copy(buf[len(a):], b)
	if t.m == nil || len(t.m) >= maxTails {
		t.m = map[*byte]*tailBuf{}
	}
	t.m[unsafe.SliceData(buf)] = &tailBuf{buf: buf, used: n}
	return unsafe.String(unsafe.SliceData(buf), n)
}
