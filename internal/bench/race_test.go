//go:build race

package bench

// raceEnabled shrinks the workloads' scale in tests run with -race, which
// makes them ten to twenty times slower.
const raceEnabled = true
