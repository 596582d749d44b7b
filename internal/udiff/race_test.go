//go:build race

package udiff

// raceEnabled is true when the race detector is on: TestLarge then uses
// smaller inputs, since the detector slows the single-goroutine diff
// several times over and adds nothing to it.
const raceEnabled = true
