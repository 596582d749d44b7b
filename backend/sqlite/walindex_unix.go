//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// walIndex is a read-only view of the header of the database's WAL index
// (the "-shm" file), which every connection of every process updates, in
// shared memory, when it commits (https://www.sqlite.org/walformat.html,
// "The WAL-Index Header"). Two reads of it that are equal bracket a span
// in which nothing was committed to the database: a commit always moves
// mxFrame (the last valid frame of the WAL), or, when it starts the WAL
// over, the salts; and the header's checksum covers both and the frames'
// running checksum. SQLite's own readers decide from it whether their
// page cache still holds (walIndexTryHdr), and so does Head (readheads.go).
//
// The file is mapped through a descriptor of our own, which is never
// closed while a Backend of the same file is open in this process:
// closing any descriptor of a file drops every POSIX lock the process
// holds on it, SQLite's included (the shm file's locks tell other
// processes which connections are alive). So the mappings are shared
// by every Backend of the process on one file and released when the last
// of them has closed its connections (walIndexes).
type walIndex struct {
	key    string
	f      *os.File
	mem    []byte
	refs   int         // Backends using it, under walIndexes.mu
	broken atomic.Bool // a read faulted: never trusted again
}

// walHeader is a consistent copy of the WAL index's header: the first of
// its two copies, which SQLite writes second.
type walHeader [walHeaderWords]uint64

const (
	walHeaderWords = 6 // 48 bytes
	// walIndexVersion is the header's iVersion (WALINDEX_MAX_VERSION):
	// another value means a format this code does not know.
	walIndexVersion = 3007000
	// walIndexMinSize: SQLite maps the index in 32 KiB regions, and
	// sizes the file to the first one before it writes a header.
	walIndexMinSize = 32 << 10
)

var walIndexes = struct {
	sync.Mutex
	m map[string]*walIndex
}{m: map[string]*walIndex{}}

// openWALIndex returns the WAL index of the database at path, which a
// connection of the caller's has opened in WAL mode; nil when it cannot
// be read (its header then never vouches for anything). The caller calls
// release once its own connections are closed.
func openWALIndex(path string) *walIndex {
	// SQLite names the index after the database's real path.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	walIndexes.Lock()
	defer walIndexes.Unlock()
	if w := walIndexes.m[path]; w != nil {
		w.refs++
		return w
	}
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil
	}
	// From here on f is never closed before the Backends are (above),
	// even when it turns out to be of no use.
	w := &walIndex{key: path, f: f, refs: 1}
	walIndexes.m[path] = w
	if fi, err := f.Stat(); err != nil || fi.Size() < walIndexMinSize {
		w.broken.Store(true)
		return w
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		w.broken.Store(true)
		return w
	}
	w.mem = mem
	return w
}

// release drops a Backend's use of w; the last one unmaps and closes it.
// The caller's connections to the database are closed.
func (w *walIndex) release() {
	if w == nil {
		return
	}
	walIndexes.Lock()
	defer walIndexes.Unlock()
	if w.refs--; w.refs > 0 {
		return
	}
	delete(walIndexes.m, w.key)
	// mem itself is left as it is: a Head racing with its Backend's
	// Close may still be reading it, and faults (see header).
	w.broken.Store(true)
	if w.mem != nil {
		_ = syscall.Munmap(w.mem)
	}
	_ = w.f.Close()
}

// header returns the header as it is now; false when it cannot vouch for
// anything: being written (its two copies differ), not initialized, of
// an unknown version, or unreadable.
func (w *walIndex) header() (h walHeader, ok bool) {
	if w == nil || w.mem == nil || w.broken.Load() {
		return h, false
	}
	// The file is never shrunk while a connection of this process is
	// open, but a fault must not kill the process: it only ends the use
	// of the index.
	defer func() {
		if recover() != nil {
			w.broken.Store(true)
			h, ok = walHeader{}, false
		}
	}()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	// SQLite writes the second copy, then the first; a reader reads the
	// first, then the second, and trusts them when they are equal
	// (walIndexTryHdr). Atomic loads keep that order here.
	words := (*[2 * walHeaderWords]uint64)(unsafe.Pointer(&w.mem[0]))
	var h2 walHeader
	for i := range walHeaderWords {
		h[i] = atomic.LoadUint64(&words[i])
	}
	for i := range walHeaderWords {
		h2[i] = atomic.LoadUint64(&words[walHeaderWords+i])
	}
	// iVersion is the first u32, isInit the byte at offset 12 (native
	// byte order, as SQLite writes it).
	version := uint32(h[0])
	isInit := byte(h[1] >> 32)
	if nativeBig {
		version = uint32(h[0] >> 32)
		isInit = byte(h[1] >> 24)
	}
	if h != h2 || version != walIndexVersion || isInit != 1 {
		return walHeader{}, false
	}
	return h, true
}

// nativeBig: the machine is big-endian (SQLite writes the header in the
// machine's order).
var nativeBig = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 0
}()
