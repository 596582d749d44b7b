package mcpserver

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestAwaitAnswersWakesEveryWaiter: Run (its context done) and the read
// loop (at the end of input) can wait for the same calls at once; the
// last answer ends both waits, not one of them while the other waits out
// the drain bound. synctest.Wait returns once every waiter is blocked, and
// its clock stands still until the test itself blocks, so a waiter left
// waiting is still waiting when the test looks.
func TestAwaitAnswersWakesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPendingCalls(time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // a waiter left waiting ends with the test
		p.n.Add(2)
		const waiters = 2
		done := make(chan struct{}, waiters)
		for range waiters {
			go func() {
				p.awaitAnswers(ctx)
				done <- struct{}{}
			}()
		}
		synctest.Wait() // both wait
		if len(done) != 0 {
			t.Fatalf("%d waiters returned with two calls unanswered", len(done))
		}
		p.answer()
		synctest.Wait()
		if len(done) != 0 {
			t.Fatalf("%d waiters returned with a call unanswered", len(done))
		}
		p.answer()
		synctest.Wait()
		if len(done) != waiters {
			t.Fatalf("%d of %d waiters returned once every call was answered", len(done), waiters)
		}
	})
}
