package harness

import (
	"context"
	"fmt"
	"hash/maphash"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestCarriedStateNamesFreshClass: a pipeline with a package-level cache
// filled by its first run gives the first run of each process (run 0 and
// every child) one outcome and the later runs of the test process
// another. The report says state is carried across runs and names the
// fresh-process class, whichever class is larger; when earlier work in
// the test process filled the cache before run 0, the fresh processes
// made to trace the cause say the same.
func TestCarriedStateNamesFreshClass(t *testing.T) {
	tests := []struct {
		name          string
		processes     int
		prefilled     bool
		fresh, fresh1 int // the fresh class; its size
	}{
		{"fresh-class-smaller", 4, false, 2, 5},
		{"fresh-class-larger", 12, false, 1, 13},
		{"filled-before-the-gate", 4, true, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resetToyCache()
			t.Cleanup(resetToyCache)
			if tt.prefilled && !inChild() {
				// Another scenario of this process filled the cache first.
				toyCacheMu.Lock()
				toyCache = map[string]bool{"lodash": true}
				toyCacheMu.Unlock()
			}
			rep := Config{Iterations: 20, Processes: tt.processes}.check(t, "carried-"+tt.name, toyPipeline{bug: "cache"}.run, false)
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.Len(t, rep.Classes, 2, "%s", rep)
			require.Equal(t, tt.fresh, rep.FreshClass, "%s", rep)
			fresh := rep.Classes[tt.fresh-1]
			require.Equal(t, tt.fresh1, fresh.Runs)
			require.Len(t, rep.ClassProcesses(tt.fresh-1), tt.processes, "every child is in the fresh class")
			require.Contains(t, rep.String(), "state is carried across runs")
			if tt.prefilled {
				require.True(t, rep.Causes.Carried, "%s", rep)
				require.Empty(t, rep.Causes.Depends)
			} else {
				require.Nil(t, rep.Causes, "the test process's own runs already differ")
				require.Contains(t, rep.String(), fmt.Sprintf("class %d holds the first run of each process", tt.fresh))
			}
		})
	}
}

// processSeed is random per process, as a map or hash seed is.
var processSeed = maphash.MakeSeed()

// processCoin is one bit of state random per process: it matches the
// test process's in half the fresh processes, the case where one control
// most often matches by chance.
func processCoin(ctx context.Context, run *Run) ([]byte, error) {
	out, err := toyPipeline{}.run(ctx, run)
	return append([]byte(fmt.Sprintf("# shard %d\n", bits.OnesCount64(maphash.String(processSeed, "lodash"))%2)), out...), err
}

// TestProcessRandomStateBlamesNoPerturbation: when the outcome depends on
// state random per process, no perturbation is blamed, over several
// gates (with one control and one try per perturbation, a perturbation
// was blamed in 5 of 6); the report says the state is random per process
// or that the process itself matters.
func TestProcessRandomStateBlamesNoPerturbation(t *testing.T) {
	t.Parallel()
	gates := 6
	if raceEnabled {
		gates = 2
	}
	for i := range gates {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rep := Config{Iterations: 20, Processes: 4}.check(t, fmt.Sprintf("process-coin-%d", i), processCoin, false)
			if rep.Verdict == gate.Pass {
				t.Skip("every child process drew the test process's value")
			}
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.NotNil(t, rep.Causes, "%s", rep)
			c := rep.Causes
			require.Empty(t, c.Depends, "an innocent perturbation is blamed:\n%s", rep)
			require.True(t, c.FreshProcess || c.ControlsDiffered > 0 || len(c.Unsteady) > 0, "%s", rep)
			require.NotContains(t, rep.String(), "the outcome depends on: ")
			t.Logf("controls differed %d of %d, fresh process %v, unsteady %q", c.ControlsDiffered, c.Controls, c.FreshProcess, c.Unsteady)
		})
	}
}

// TestStateLeftByAnEarlierScenario: one scenario fills a package-level
// cache that a later scenario of the same process reads. The later
// scenario's runs in the test process all agree; its children, which run
// it alone, do not, and the fresh processes made to trace the cause say
// state is carried across runs rather than blaming a perturbation.
func TestStateLeftByAnEarlierScenario(t *testing.T) {
	resetToyCache()
	t.Cleanup(resetToyCache)
	fill := func(ctx context.Context, run *Run) ([]byte, error) {
		toyCacheMu.Lock()
		toyCache = map[string]bool{"lodash": true}
		toyCacheMu.Unlock()
		return toyPipeline{}.run(ctx, run)
	}
	cfg := Config{Iterations: 12, Floor: 12, Processes: 2}
	first := cfg.check(t, "fills-the-cache", fill, false)
	if first != nil && !inChild() {
		require.Equal(t, gate.Pass, first.Verdict, "%s", first)
	}
	rep := cfg.check(t, "reads-the-cache", toyPipeline{bug: "cache"}.run, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Equal(t, 10, rep.Classes[0].InProcess, "every run in the test process saw the cache filled")
	require.NotNil(t, rep.Causes, "%s", rep)
	require.True(t, rep.Causes.Carried, "%s", rep)
	require.Empty(t, rep.Causes.Depends)
	require.Equal(t, 2, rep.FreshClass)
	require.Contains(t, rep.String(), "state is carried across runs: 3 fresh processes")
}
