//go:build !race

package luahost

// raceDetector says the binary was built with -race (race.go).
const raceDetector = false
