//go:build unix

package cassettes

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system: on
// a machine shared with other work, a benchmark's wall time measures the
// others too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
