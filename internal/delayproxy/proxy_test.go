package delayproxy

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer echoes every connection back until it closes.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { io.Copy(c, c); c.Close() })
		}
	})
	return ln.Addr().String()
}

// TestRoundTripsTakeTheRTT counts round trips through the proxy: n of
// them, one after the other, cannot take less than n × the RTT, as each
// direction waits half of it.
func TestRoundTripsTakeTheRTT(t *testing.T) {
	const rtt, n = 20 * time.Millisecond, 10
	p, err := Start(echoServer(t), rtt)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 1)
	start := time.Now()
	for i := range n {
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		if buf[0] != byte(i) {
			t.Fatalf("round trip %d echoed %d", i, buf[0])
		}
	}
	if el := time.Since(start); el < n*rtt {
		t.Errorf("%d round trips took %v, less than %d × %v", n, el, n, rtt)
	}
	if got := p.Accepted(); got != 1 {
		t.Errorf("%d connections accepted, want 1", got)
	}
	if got := p.Sends(); got != n {
		t.Errorf("%d sends counted, want the %d round trips", got, n)
	}
}

// TestBytesPassInOrder sends more than one read's worth each way, in
// pieces, and checks every byte comes back in order, with the proxy's
// writer delaying and the reader going on.
func TestBytesPassInOrder(t *testing.T) {
	p, err := Start(echoServer(t), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	var got []byte
	var wg sync.WaitGroup
	wg.Go(func() { got, _ = io.ReadAll(c) })
	for b := want; len(b) > 0; {
		k := min(len(b), 10000)
		if _, err := c.Write(b[:k]); err != nil {
			t.Fatal(err)
		}
		b = b[k:]
	}
	c.(*net.TCPConn).CloseWrite()
	wg.Wait()
	c.Close()
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes came back, want %d, or they differ", len(got), len(want))
	}
}

// TestCloseCutsConnections checks Close returns with a connection open:
// no goroutine waits on it.
func TestCloseCutsConnections(t *testing.T) {
	p, err := Start(echoServer(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := c.Read(buf); err == nil {
		t.Fatal("read after Close succeeded")
	}
	if _, err := Start("x", -time.Millisecond); err == nil {
		t.Fatal("a negative RTT was accepted")
	}
}

// TestWaitNotEarly checks that no wait ends before its due time, for
// delays below and above the millisecond the runtime's poller sleeps in.
func TestWaitNotEarly(t *testing.T) {
	w := newWaiter()
	defer w.close()
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond, 1500 * time.Microsecond} {
		for range 20 {
			due := time.Now().Add(d)
			w.until(due)
			if early := time.Until(due); early > 0 {
				t.Fatalf("a wait of %v ended %v early", d, early)
			}
		}
	}
}

// BenchmarkWait measures how late a wait of 500 µs ends, with the
// platform's waiter and with a time.Timer (decision 0096).
func BenchmarkWait(b *testing.B) {
	for _, c := range []struct {
		name string
		w    waiter
	}{{"platform", newWaiter()}, {"timer", newTimerWaiter()}} {
		b.Run(c.name, func(b *testing.B) {
			defer c.w.close()
			var late time.Duration
			for b.Loop() {
				due := time.Now().Add(500 * time.Microsecond)
				c.w.until(due)
				late += time.Since(due)
			}
			b.ReportMetric(float64(late.Microseconds())/float64(b.N), "µs-late/op")
		})
	}
}

// TestSlowReaderHoldsUpNoOne: a client that does not read what comes back
// fills its link, and the rest waits in that link's backlog: another
// connection's round trips still pass meanwhile, and every byte reaches
// the slow client, in order, once it reads.
func TestSlowReaderHoldsUpNoOne(t *testing.T) {
	p, err := Start(echoServer(t), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	slow, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// Far more than the kernel's buffers of the two sockets hold: the
	// proxy's side may grow to tcp_wmem's bound, a few MB.
	slow.(*net.TCPConn).SetReadBuffer(256 << 10)
	want := make([]byte, 32<<20)
	for i := range want {
		want[i] = byte(i * 13)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := slow.Write(want)
		slow.(*net.TCPConn).CloseWrite()
		sent <- err
	}()

	quick, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer quick.Close()
	passed := make(chan error, 1)
	go func() {
		buf := make([]byte, 1)
		for i := range 10 {
			if _, err := quick.Write([]byte{byte(i)}); err != nil {
				passed <- err
				return
			}
			if _, err := io.ReadFull(quick, buf); err != nil {
				passed <- err
				return
			}
		}
		passed <- nil
	}()
	select {
	case err := <-passed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a connection's round trips waited for another connection's slow reader")
	}

	got, err := io.ReadAll(slow)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes came back, want %d, or they differ", len(got), len(want))
	}
}
