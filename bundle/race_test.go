//go:build race

package bundle

const raceEnabled = true
