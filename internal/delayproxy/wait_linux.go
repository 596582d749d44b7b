//go:build linux

package delayproxy

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdWaiter sleeps on a timerfd read through Go's network poller: the
// kernel wakes it at the due time, to within tens of microseconds. A
// time.Timer cannot do that for sub-millisecond delays: when nothing else
// runs, the runtime sleeps in epoll_wait, whose timeout is in whole
// milliseconds, so a wait of 500 µs takes 1.1 ms (decision 0096).
type timerfdWaiter struct {
	f   *os.File
	fd  int // f's descriptor, kept apart: f.Fd() would make it blocking
	buf [8]byte
}

func newWaiter() waiter {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newTimerWaiter()
	}
	return &timerfdWaiter{f: os.NewFile(uintptr(fd), "delayproxy-timerfd"), fd: fd}
}

func (w *timerfdWaiter) until(due time.Time) {
	d := time.Until(due)
	if d <= 0 {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	// The read returns the number of expirations once the timer fired.
	if _, err := io.ReadFull(w.f, w.buf[:]); err != nil {
		time.Sleep(time.Until(due))
	}
}

func (w *timerfdWaiter) close() { w.f.Close() }
