package luahost

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"
)

// The pipe between a run's child process and its parent carries frames
// (docs/decisions/0105-lua-runs-in-child-processes.md): a uint32 length,
// then the request id, the operation, the workspace handle, strings and
// integers. The child sends requests (a store or docs call, a print, the
// run's end); the parent answers each request by its id, so that fanout
// arms can wait on calls at once.

// frame is one message of the pipe.
type frame struct {
	id uint64
	op byte
	ws uint64
	s  []string
	n  []int64

	size int // the frame's length on the pipe (set by recv)
}

// Operations. Requests of the child, answered with opOK or opErr (whose
// s[0] is the message); opPrint and opDone are not answered.
const (
	opOK byte = iota + 1
	opErr
	opHello // child: ready for a run
	opStart // parent: s = name, source, args...; n = timeout, max memory, fanout max
	opDone  // child: n[0] = outcome, s[0] = message
	opPrint // child: s[0] = text
	opWrite
	opAppend
	opRead
	opStrReplace
	opGlob
	opExists
	opDelete
	opUntrusted
	opDocGet
	opDocSet
	opDocQuery
	opDocList
	opDocRemove
	opFanoutOpen
	opFanoutClose
	opSync // child: answered once every call before it is done
)

// opAsync marks a call the child does not wait for (a mutator of the run's
// own workspace, decision 0109): its last string is where the script made
// it, and the parent answers it only when it fails.
const opAsync byte = 0x80

// maxFrame bounds a frame: a script's source, a file or a document, with
// room for the rest.
const maxFrame = 1 << 30

var errFrame = errors.New("luahost: malformed frame")

// conn reads and writes frames; writes are safe for concurrent use.
type conn struct {
	r   *bufio.Reader
	max int64 // the largest frame recv accepts (0: maxFrame)

	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

func newConn(r io.Reader, w io.Writer) *conn {
	return &conn{r: bufio.NewReaderSize(r, 64<<10), w: bufio.NewWriterSize(w, 64<<10)}
}

// send writes f and flushes it. Long strings (a file's content) go to
// the writer as they are, not copied into the frame's buffer first.
func (c *conn) send(f *frame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := uvarintLen(f.id) + 1 + uvarintLen(f.ws) + uvarintLen(uint64(len(f.s))) + uvarintLen(uint64(len(f.n)))
	for _, s := range f.s {
		size += uvarintLen(uint64(len(s))) + len(s)
	}
	for _, n := range f.n {
		size += varintLen(n)
	}
	if size > maxFrame {
		return fmt.Errorf("luahost: a frame of %d bytes is over the limit", size)
	}
	b := binary.LittleEndian.AppendUint32(c.buf[:0], uint32(size))
	b = binary.AppendUvarint(b, f.id)
	b = append(b, f.op)
	b = binary.AppendUvarint(b, f.ws)
	b = binary.AppendUvarint(b, uint64(len(f.s)))
	for _, s := range f.s {
		b = binary.AppendUvarint(b, uint64(len(s)))
		if len(s) < longString {
			b = append(b, s...)
			continue
		}
		if _, err := c.w.Write(b); err != nil {
			return err
		}
		if _, err := c.w.WriteString(s); err != nil {
			return err
		}
		b = b[:0]
	}
	b = binary.AppendUvarint(b, uint64(len(f.n)))
	for _, n := range f.n {
		b = binary.AppendVarint(b, n)
	}
	if cap(b) <= 1<<20 {
		c.buf = b
	}
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	return c.w.Flush()
}

// longString is the length from which send writes a string on its own.
const longString = 1 << 10

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

func varintLen(v int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], v)
}

// recv reads the next frame; only one goroutine reads.
func (c *conn) recv() (*frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(hdr[:])
	if size > maxFrame || (c.max > 0 && int64(size) > c.max) {
		return nil, errFrame
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return nil, err
	}
	f, err := decodeFrame(b)
	if err != nil {
		return nil, err
	}
	f.size = len(b)
	return f, nil
}

func decodeFrame(b []byte) (*frame, error) {
	f := &frame{}
	bad := false
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	f.id = uv()
	if bad || len(b) == 0 {
		return nil, errFrame
	}
	f.op = b[0]
	b = b[1:]
	f.ws = uv()
	ns := uv()
	if ns > uint64(len(b)) {
		return nil, errFrame
	}
	f.s = make([]string, ns)
	for i := range f.s {
		l := uv()
		if l > uint64(len(b)) {
			return nil, errFrame
		}
		// b is this frame's alone and never written again: its strings
		// share it rather than copy it (a file's content is most of it).
		f.s[i] = unsafe.String(unsafe.SliceData(b), int(l))
		b = b[l:]
	}
	nn := uv()
	if nn > uint64(len(b)) {
		return nil, errFrame
	}
	f.n = make([]int64, nn)
	for i := range f.n {
		v, n := binary.Varint(b)
		if n <= 0 {
			return nil, errFrame
		}
		f.n[i] = v
		b = b[n:]
	}
	if bad || len(b) != 0 {
		return nil, errFrame
	}
	return f, nil
}

// str returns s[i], or "" past the end.
func (f *frame) str(i int) string {
	if i < len(f.s) {
		return f.s[i]
	}
	return ""
}

// num returns n[i], or 0 past the end.
func (f *frame) num(i int) int64 {
	if i < len(f.n) {
		return f.n[i]
	}
	return 0
}
