package harness

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestScheduleCatchRate measures how often a gate catches results listed
// (fanout) or a float sum accumulated (floatsum) in the completion order
// of a CPU-bound fan-out, with the GOMAXPROCS schedule limited to the core
// count, 1..2, against the default schedule, 1..max(8, NumCPU), and
// requires the default to catch them in nearly every gate when the
// machine lets goroutines run in parallel, and about as often as the
// core-count schedule when a loaded machine lets them less. The rates are logged
// (go test -v -run TestScheduleCatchRate).
func TestScheduleCatchRate(t *testing.T) {
	gates := 100
	if testing.Short() || raceEnabled {
		gates = 10
	}
	// rate returns the gates that caught the bug and the share of runs
	// outside each gate's largest class.
	rate := func(bug string, procs []int) (int, float64) {
		caught, off := 0, 0
		for range gates {
			rep := gateOnce(t, Config{Procs: procs}, toyPipeline{bug: bug})
			if rep.Verdict == gate.Nondeterministic {
				caught++
			}
			off += rep.Runs - rep.Classes[0].Runs
		}
		return caught, float64(off) / float64(gates*defaultIterations)
	}
	for _, bug := range []string{"fanout", "floatsum"} {
		two, twoOff := rate(bug, []int{1, 2})
		def, defOff := rate(bug, nil)
		t.Logf("%s, %d gates of %d runs each: caught by %d gates with GOMAXPROCS 1..2 (%.1f%% of runs off the largest class), by %d with the default 1..%d (%.1f%%)",
			bug, gates, defaultIterations, two, 100*twoOff, def, max(DefaultMaxProcs, runtime.NumCPU()), 100*defOff)
		if two < gates/2 {
			// Goroutines ran one after the other whatever GOMAXPROCS
			// said: the machine's CPUs were busy elsewhere (go test ./...
			// runs packages side by side). Nothing to measure.
			t.Logf("%s: the machine gave these gates no parallelism; not judged", bug)
			continue
		}
		// On a machine that lets goroutines run in parallel, the 1..2
		// schedule catches the bug in nearly every gate, and the default
		// must catch it in at least 80%. On a loaded machine both catch
		// less (the 1..2 schedule 68 to 99 gates of 100 with two busy
		// loops on both cores); the default must then catch it about as
		// often: within 15 gates of 100 of the 1..2 schedule, over three
		// standard deviations of the difference of two such counts.
		want := min(gates*80/100, two-gates*15/100)
		require.GreaterOrEqual(t, def, want, "%s: the default GOMAXPROCS schedule caught it in %d of %d gates, the 1..2 schedule in %d; the default must catch it in (nearly) every gate the 1..2 schedule catches (rates: go test ./harness -run '^TestScheduleCatchRate$' -count=1 -v)", bug, def, gates, two)
	}
}
