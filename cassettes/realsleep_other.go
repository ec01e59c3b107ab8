//go:build !unix && !windows

package cassettes

import "time"

// realSleep waits d. On this platform it is time.Sleep, so inside a
// testing/synctest bubble it moves the bubble's fake clock only.
func realSleep(d time.Duration) { time.Sleep(d) }
