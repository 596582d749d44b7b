//go:build unix

package delayproxy

import (
	"net"
	"syscall"
)

// writeNow writes what the socket takes of b without waiting: n < len(b)
// with a nil error when its buffer is full.
func writeNow(c net.Conn, b []byte) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			k, e := syscall.Write(int(fd), b[n:])
			if e == syscall.EINTR {
				continue
			}
			if e == syscall.EAGAIN {
				return true
			}
			if e != nil {
				werr = e
				return true
			}
			n += k
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return n, err
}
