package harness

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScheduleCatchRate measures how often a gate catches a float sum
// accumulated in fan-out completion order (the floatsum bug) with the
// GOMAXPROCS schedule limited to the core count, 1..2, against the default
// schedule, 1..max(8, NumCPU), and requires the default to catch it every
// time. The rates are logged (go test -v -run TestScheduleCatchRate).
func TestScheduleCatchRate(t *testing.T) {
	gates := 100
	if testing.Short() || raceEnabled {
		gates = 10
	}
	// rate returns the gates that caught the bug and the share of runs
	// outside each gate's largest class.
	rate := func(procs []int) (int, float64) {
		caught, off := 0, 0
		for range gates {
			rep := gateOnce(t, Config{Procs: procs}, toyPipeline{bug: "floatsum"})
			if rep.Verdict == Nondeterministic {
				caught++
			}
			off += rep.Runs - rep.Classes[0].Size
		}
		return caught, float64(off) / float64(gates*DefaultIterations)
	}
	two, twoOff := rate([]int{1, 2})
	def, defOff := rate(nil)
	t.Logf("float sum in completion order, %d gates of %d runs each: caught by %d gates with GOMAXPROCS 1..2 (%.1f%% of runs off the largest class), by %d with the default 1..%d (%.1f%%)",
		gates, DefaultIterations, two, 100*twoOff, def, max(DefaultMaxProcs, len(affinity())), 100*defOff)
	require.GreaterOrEqual(t, def, gates*90/100, "the default schedule catches it in nearly every gate, even on a loaded machine")
}
