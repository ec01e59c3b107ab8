//go:build race

package properties

func init() { raceEnabled = true }
