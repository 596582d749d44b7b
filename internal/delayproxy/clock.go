package delayproxy

import (
	"net"
	"sync"
	"time"
)

// clock delivers the chunks of every connection of a proxy when they are
// due. Every chunk waits the same delay, so chunks fall due in the order
// they were read: one queue in that order serves all connections, and one
// goroutine sleeps until its first chunk is due and then delivers every
// chunk due by then. A goroutine and a timer for each direction of each
// connection cost a hand-off between goroutines and a timer's wakeup for
// every chunk, which on a machine the measured processes share is CPU
// taken from them (docs/decisions/0100-delay-proxy-one-clock.md).
type clock struct {
	mu   sync.Mutex
	q    []delivery
	kick chan struct{} // wakes run when q was empty
	stop chan struct{}
	done chan struct{}
}

// delivery is a chunk due on a link at due; b nil is the end of the
// stream (the link's write side closes).
type delivery struct {
	to  *outbox
	b   []byte
	due time.Time
}

func (c *clock) start() {
	c.kick, c.stop, c.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go c.run()
}

// halt stops the clock; what it still holds is not delivered.
func (c *clock) halt() {
	close(c.stop)
	<-c.done
}

func (c *clock) add(d delivery) {
	c.mu.Lock()
	c.q = append(c.q, d)
	first := len(c.q) == 1
	c.mu.Unlock()
	if first {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

func (c *clock) run() {
	defer close(c.done)
	w := newWaiter()
	defer w.close()
	var due []delivery
	for {
		c.mu.Lock()
		for len(c.q) == 0 {
			c.mu.Unlock()
			select {
			case <-c.kick:
			case <-c.stop:
				return
			}
			c.mu.Lock()
		}
		first := c.q[0].due
		c.mu.Unlock()
		w.until(first)
		now := time.Now()
		c.mu.Lock()
		n := 0
		for n < len(c.q) && !c.q[n].due.After(now) {
			n++
		}
		due = append(due[:0], c.q[:n]...)
		clear(c.q[:n])
		c.q = c.q[n:]
		c.mu.Unlock()
		for i := range due {
			due[i].to.deliver(due[i].b)
			due[i] = delivery{}
		}
	}
}

// outbox writes what the clock delivers for one side of a connection.
// A chunk is written at once, without blocking; what the socket does not
// take at once (its buffer full: the peer is slow to read) waits in the
// backlog for a goroutine of the outbox's own, so that one slow reader
// never holds up the clock and the other connections.
type outbox struct {
	c       net.Conn
	mu      sync.Mutex
	backlog [][]byte
	writing bool // a drain goroutine owns the writes
	eof     bool // the stream ended: close the write side after the backlog
	dead    bool // the link was cut or a write failed: drop everything
	done    chan struct{}
}

func newOutbox(c net.Conn) *outbox { return &outbox{c: c, done: make(chan struct{})} }

// deliver writes b, or ends the stream when b is nil.
func (o *outbox) deliver(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead {
		return
	}
	if !o.writing {
		if b == nil {
			o.closeWriteLocked()
			return
		}
		n, err := writeNow(o.c, b)
		if err != nil {
			o.cutLocked()
			return
		}
		if n == len(b) {
			return
		}
		b = b[n:]
		o.writing = true
		go o.drain()
	}
	if b == nil {
		o.eof = true
		return
	}
	o.backlog = append(o.backlog, b)
}

// drain writes the backlog, blocking, until it is empty.
func (o *outbox) drain() {
	for {
		o.mu.Lock()
		if o.dead {
			o.mu.Unlock()
			return
		}
		if len(o.backlog) == 0 {
			o.writing = false
			if o.eof {
				o.closeWriteLocked()
			}
			o.mu.Unlock()
			return
		}
		b := o.backlog[0]
		o.backlog[0] = nil
		o.backlog = o.backlog[1:]
		o.mu.Unlock()
		if _, err := o.c.Write(b); err != nil {
			o.cut()
			return
		}
	}
}

func (o *outbox) closeWriteLocked() {
	if tc, ok := o.c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	o.dead = true
	close(o.done)
}

// cut closes the link at once, dropping what it has not written.
func (o *outbox) cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cutLocked()
}

func (o *outbox) cutLocked() {
	if o.dead {
		return
	}
	o.dead = true
	o.backlog = nil
	o.c.Close()
	close(o.done)
}
