//go:build race

package cli

const raceDetector = true
