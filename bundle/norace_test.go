//go:build !race

package bundle

const raceEnabled = false
