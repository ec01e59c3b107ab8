// Package withtests has a test file that reads the wall clock; only
// Config.Tests makes detvet look at it.
package withtests

func Double(x int) int { return 2 * x }
