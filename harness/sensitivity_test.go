package harness

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
)

// raceEnabled is set under -race, where the rate measurements run fewer
// gates to keep the suite fast.
var raceEnabled bool

// gateOnce runs one gate over p in this process exactly as Check does (a
// synctest bubble per run), without child processes or evidence, and
// returns the report instead of failing t.
func gateOnce(t *testing.T, cfg Config, p toyPipeline) *Report {
	t.Helper()
	cfg.Processes = -1
	rc, err := cfg.resolve()
	require.NoError(t, err)
	b := newBubbleRunner(t, &rc, p.run)
	rep := newReport(&rc, "toy-"+p.bug)
	iterate(t.Context(), &rc, rep, p.run, env{isolation: "synctest", run: b.run, noEvidence: true})
	return rep
}

// TestSensitivity proves that the gate catches each class of determinism
// bug it exists for in one process, and names the right event, over many
// gate runs. Bugs whose symptom needs goroutines to run in parallel
// (completion order of a CPU-bound fan-out) are measured by
// TestScheduleCatchRate: how often they show depends on the CPUs the
// machine gives the test.
func TestSensitivity(t *testing.T) {
	gates := 100
	if testing.Short() || raceEnabled {
		gates = 10
	}
	tests := []struct {
		name      string
		bug       string
		index     int
		kind      events.Kind
		output    bool // the output bytes differ too
		payloadAt string
	}{
		{"map-iteration-into-prompt", "map", toyIdxComposed, toyComposed, false, `["prompt"]`},
		{"time-now-in-payload", "clock", toyIdxSent, toySent, false, `["sent_at"]`},
		{"package-cache-across-runs", "cache", toyIdxQueried, toyQueried, false, `["cached"]`},
		{"random-id-in-output", "random", toyIdxPatched, toyPatched, true, `["diff_digest"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caught, right := 0, 0
			var sample *Report
			for range gates {
				resetToyCache() // each gate run stands for a fresh process
				rep := gateOnce(t, Config{}, toyPipeline{bug: tt.bug})
				if rep.Verdict != gate.Nondeterministic || !errors.Is(rep.Err(), ErrNondeterministic) {
					continue
				}
				caught++
				d := rep.Divergence
				if d.Event != nil && d.Event.Index == tt.index && d.Event.Kind == tt.kind && d.Event.Field == "Payload" &&
					(d.Output != nil) == tt.output && len(d.Event.PayloadDiff) > 0 {
					right++
				}
				if sample == nil {
					sample = rep
				}
			}
			rate := float64(caught) / float64(gates)
			t.Logf("%s: caught %d/%d gate runs (%.1f%%), right event %d/%d", tt.name, caught, gates, 100*rate, right, caught)
			require.GreaterOrEqual(t, rate, 0.99, "catch rate")
			require.Equal(t, caught, right, "every catch names event %d (%s):\n%s", tt.index, tt.kind, sample)
			require.Contains(t, sample.String(), tt.payloadAt)
			require.Contains(t, sample.String(), "causal chain")
			require.Empty(t, sample.ReRecordCommand, "a nondeterminism never suggests re-recording")
		})
	}
}

// TestAllRunsAreMade: a divergence does not stop the runs; every class is
// counted, and the comparison is between the two largest classes, whatever
// run 0 did.
func TestAllRunsAreMade(t *testing.T) {
	resetToyCache()
	rep := gateOnce(t, Config{Iterations: 40}, toyPipeline{bug: "cache"})
	require.Equal(t, 40, rep.Runs)
	require.Equal(t, gate.Nondeterministic, rep.Verdict)
	require.Len(t, rep.Classes, 2)
	// Run 0 is the rare one: it alone saw an empty cache.
	require.Equal(t, 39, rep.Classes[0].Runs)
	require.Equal(t, 1, rep.Classes[0].FirstRun)
	require.Equal(t, 1, rep.Classes[1].Runs)
	require.Equal(t, 0, rep.Classes[1].FirstRun)
	require.Equal(t, 1, rep.Divergence.RunA)
	require.Equal(t, 0, rep.Divergence.RunB)
	require.Contains(t, rep.Summary(), "2 class(es) 39+1")
}

func TestFailFast(t *testing.T) {
	t.Parallel()
	rep := gateOnce(t, Config{FailFast: true}, toyPipeline{bug: "random"})
	require.True(t, rep.FailedFast)
	require.Equal(t, 2, rep.Runs)
	require.Equal(t, gate.Nondeterministic, rep.Verdict)
	require.ErrorIs(t, rep.Err(), ErrNondeterministic)
	require.NotErrorIs(t, rep.Err(), errBelowFloor, "fail-fast is a verdict, not a shortfall")
}

// TestNoFalsePositives runs the clean pipeline 1000 times, some of them in
// child processes with a perturbed environment: a clean pipeline must
// never get a false verdict.
func TestNoFalsePositives(t *testing.T) {
	t.Parallel()
	iters, procs := 1000, 10
	if testing.Short() || raceEnabled {
		iters, procs = 200, 4
	}
	rep := Config{Iterations: iters, Processes: procs}.check(t, "clean", toyPipeline{}.run, false)
	require.NoError(t, rep.Err(), "%s", rep)
	require.Equal(t, gate.Pass, rep.Verdict)
	require.Equal(t, iters, rep.Runs)
	require.Equal(t, procs, rep.ProcessRuns)
	require.Len(t, rep.Classes, 1)
	t.Logf("clean pipeline: %d runs (%d in child processes), 1 class, 0 false verdicts, %v", rep.Runs, rep.ProcessRuns, rep.Wall)
}

// TestCheckWritesNoEvidenceOnPass: a passing gate leaves nothing behind.
func TestCheckWritesNoEvidenceOnPass(t *testing.T) {
	t.Parallel()
	rep := Config{Processes: -1}.check(t, "clean-no-evidence", toyPipeline{}.run, false)
	require.Equal(t, gate.Pass, rep.Verdict)
	require.Empty(t, rep.Evidence)
	require.Equal(t, fmt.Sprint(len(rep.Classes)), "1")
}
