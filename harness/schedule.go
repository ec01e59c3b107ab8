package harness

import (
	"runtime"
	"sync"
)

// perturbSchedule starts a few goroutines that yield a run-dependent number
// of times while the scenario runs, and yields the calling goroutine a
// run-dependent number of times, so that the run queue each run sees is
// different. It returns a function that waits for the yielders.
func perturbSchedule(iter int) (wait func()) {
	var wg sync.WaitGroup
	for k := range iter % 4 {
		n := (iter*7+k*3)%11 + 1
		wg.Go(func() {
			for range n {
				runtime.Gosched()
			}
		})
	}
	for range iter % 3 {
		runtime.Gosched()
	}
	return wg.Wait
}
