package luahost

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// How the memory limit works (docs/decisions/0016-lua-limits.md): every
// function that can build a large value in one call (string.rep,
// string.format, table.concat, gsub, the store's reads, untrusted) refuses
// a value larger than the limit before building it; and a watchdog
// samples the process's heap while the run lasts. When the heap has grown
// by more than the limit since the run began, it collects garbage once to
// see what is really live, and if the growth is still over the limit it
// stops the run through its context: the next Lua instruction of every
// arm raises, and the run ends with `script exceeded its memory limit`.
// `..` and table growth are caught by the watchdog, within one sample
// (a few milliseconds) and one allocation, and after the next collection
// (watchCollections). A run executes in a child process of its own
// (child.go), whose heap is the run's alone; there the operating system
// also refuses the process memory far past the limit
// (docs/decisions/0107-child-memory-and-deaths.md).

const (
	sampleEvery  = 2 * time.Millisecond
	minGCBetween = 20 * time.Millisecond
)

var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/heap/live:bytes"},
}

// heap returns the bytes of heap objects (live and not yet swept) and
// the live heap as of the last collection.
func heap() (objects, live int64) {
	s := make([]metrics.Sample, len(heapSamples))
	copy(s, heapSamples)
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// watchMemory starts the run's watchdog; the function it returns stops it.
//
// The base is the live heap at the last collection before the run, which
// may still count an earlier run's garbage; a collection during the run
// that finds less live heap lowers it, so a run is never allowed that
// garbage on top of its limit. The live heap of a collection the runtime
// made by itself is as exact as a forced one, so it is checked too.
func (r *run) watchMemory() func() {
	_, base := heap()
	done := make(chan struct{})
	r.watchCollections(base, done)
	go func() {
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		var lastGC time.Time
		over := func(live int64) bool {
			base = min(base, live)
			return live-base > r.maxMemory
		}
		for {
			select {
			case <-done:
				return
			case <-r.ctx.Done():
				return
			case <-t.C:
			}
			objects, live := heap()
			if over(live) {
				r.stop(r.memErr)
				return
			}
			if objects-base <= r.maxMemory || time.Since(lastGC) < minGCBetween {
				continue
			}
			runtime.GC()
			lastGC = time.Now()
			if _, live := heap(); over(live) {
				r.stop(r.memErr)
				return
			}
		}
	}()
	return func() { close(done) }
}

// gcSentinel is an object whose cleanup runs after the collection that
// found it unreachable.
type gcSentinel struct{ _ [16]byte }

// watchCollections checks the live heap after every collection until
// done: the collector runs as the run allocates, so this check keeps up
// with the script however little CPU time the watchdog's ticker gets (in
// a child process, the heap is the run's alone).
func (r *run) watchCollections(base int64, done <-chan struct{}) {
	var arm func()
	arm = func() {
		runtime.AddCleanup(&gcSentinel{}, func(struct{}) {
			select {
			case <-done:
				return
			case <-r.ctx.Done():
				return
			default:
			}
			if _, live := heap(); live-base > r.maxMemory {
				r.stop(r.memErr)
				return
			}
			arm()
		}, struct{}{})
	}
	arm()
}
