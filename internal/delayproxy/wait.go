package delayproxy

import "time"

// waiter sleeps until a chunk is due.
type waiter interface {
	until(due time.Time)
	close()
}

// timerWaiter waits on a time.Timer: exact to the millisecond only, as
// the runtime's poller sleeps in whole milliseconds (wait_linux.go).
type timerWaiter struct{ t *time.Timer }

func newTimerWaiter() waiter { return &timerWaiter{} }

func (w *timerWaiter) until(due time.Time) {
	d := time.Until(due)
	if d <= 0 {
		return
	}
	if w.t == nil {
		w.t = time.NewTimer(d)
	} else {
		w.t.Reset(d)
	}
	<-w.t.C
}

func (w *timerWaiter) close() {
	if w.t != nil {
		w.t.Stop()
	}
}
