//go:build unix

package delayproxy

import (
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRoundTrips runs 64 clients, each making round trips of 200
// bytes one after the other to an echo server in this process, through a
// 1 ms proxy and straight, and reports the process's CPU a round trip: the
// difference is the proxy's.
func BenchmarkRoundTrips(b *testing.B) {
	b.Run("proxy", func(b *testing.B) { roundTrips(b, true) })
	b.Run("direct", func(b *testing.B) { roundTrips(b, false) })
}

func roundTrips(b *testing.B, proxied bool) {
	const clients = 64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	addr := ln.Addr().String()
	if proxied {
		p, err := Start(addr, time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		addr = p.Addr()
	}
	conns := make([]net.Conn, clients)
	for i := range conns {
		if conns[i], err = net.Dial("tcp", addr); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	msg := make([]byte, 200)
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, c := range conns {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Go(func() {
			buf := make([]byte, len(msg))
			for range n {
				if _, err := c.Write(msg); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/rt")
}
