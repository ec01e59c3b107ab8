//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cassettes

import (
	"time"

	"golang.org/x/sys/unix"
)

// realNow reads the system's monotonic clock through the clock_gettime
// system call. testing/synctest fakes only the runtime's own time
// functions, so this clock moves in real time inside a bubble too.
func realNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return fallbackNow()
	}
	return time.Duration(ts.Nano())
}
