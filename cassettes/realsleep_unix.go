//go:build unix

package cassettes

import (
	"time"

	"golang.org/x/sys/unix"
)

// realSleep waits d on the real clock, even inside a testing/synctest
// bubble (where time.Sleep only moves the bubble's fake clock): waiting
// for another process to release a lock takes real time.
func realSleep(d time.Duration) {
	unix.Poll(nil, int(d/time.Millisecond))
}
