//go:build !linux

package delayproxy

func newWaiter() waiter { return newTimerWaiter() }
