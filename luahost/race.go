//go:build race

package luahost

// raceDetector says the binary was built with -race. ThreadSanitizer maps
// shadow memory for everything the runtime maps, which a data limit
// counts: a child of such a binary leaves RLIMIT_DATA unset and keeps the
// runtime's memory limit and the host's own checks.
const raceDetector = true
