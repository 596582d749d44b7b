// Package delayproxy is a TCP proxy on loopback that delays each direction
// of every connection by a fixed time, to stand for a network between a
// client and its server (half the round trip each way). Bytes keep their
// order and the link's bandwidth is not limited: a chunk read at t is
// written at t + delay, whatever else is in flight.
package delayproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards the connections it accepts to its target.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration

	accepted atomic.Int64
	// sends counts the reads from clients that the proxy forwarded: each
	// is one message or a burst of them, so about one round trip a client
	// waits on.
	sends atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	clock clock
}

// Start listens on a free loopback port and forwards every connection to
// target (host:port), delaying each direction by rtt/2.
func Start(target string, rtt time.Duration) (*Proxy, error) {
	if rtt < 0 {
		return nil, errors.New("delayproxy: the round trip must not be negative")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, delay: rtt / 2, conns: map[net.Conn]struct{}{}}
	p.clock.start()
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted counts the connections the proxy has accepted.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Sends counts the chunks forwarded from clients to the target: about
// the number of round trips the clients made (a request that is larger
// than a read, or sent in pieces, counts more than once).
func (p *Proxy) Sends() int64 { return p.sends.Load() }

// Close stops accepting, cuts every connection and waits for its
// goroutines.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.clock.halt()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				return
			}
			if !p.track(s) {
				return
			}
			defer p.untrack(s)
			toServer, toClient := newOutbox(s), newOutbox(c)
			var both sync.WaitGroup
			both.Go(func() { p.pipe(toServer, c, &p.sends) })
			both.Go(func() { p.pipe(toClient, s, nil) })
			both.Wait()
			// What was read is delivered, or its link cut, before the
			// connections close.
			<-toServer.done
			<-toClient.done
		}()
	}
}

// pipe reads src until it ends and hands each chunk to the clock, due
// p.delay after it was read, for dst; it counts its chunks in count when
// not nil. Reading never waits for a delayed write: what is in flight is
// bounded by what the sender sends in one delay, as on a real link.
func (p *Proxy) pipe(dst *outbox, src net.Conn, count *atomic.Int64) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if count != nil {
				count.Add(1)
			}
			p.clock.add(delivery{to: dst, b: append([]byte(nil), buf[:n]...), due: time.Now().Add(p.delay)})
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				// The end of the stream travels as the bytes do.
				p.clock.add(delivery{to: dst, due: time.Now().Add(p.delay)})
			} else {
				dst.cut()
			}
			return
		}
	}
}
