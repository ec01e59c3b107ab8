package gate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// passResult is a result that passes: verdict PASS, 50 runs in one
// class, floor 20.
func passResult(scenario string) gate.Result {
	return gate.Result{Outcome: gate.Outcome{Scenario: scenario, Test: "TestGate/" + scenario, ImportPath: "example.com/p",
		Verdict: gate.Pass, Iterations: 50, Runs: 50, Floor: 20, Classes: []gate.Class{{Runs: 50}}}}
}

func TestMergeConflict(t *testing.T) {
	r := gate.Result{Outcome: gate.Outcome{Scenario: "a", Test: "TestA", ImportPath: "example.com/p", Verdict: gate.Pass, Runs: 50}}
	other := r
	other.Runs = 49
	_, err := gate.MergeResults([]gate.Result{r, other})
	require.ErrorIs(t, err, gate.ErrConflict)
	merged, err := gate.MergeResults([]gate.Result{r, r})
	require.NoError(t, err)
	require.Len(t, merged, 1, "identical duplicates are kept once")
}

// TestMergeRetriedShard: a retried shard whose result differs only in
// wall time is the same result; the faster one is kept, whatever the
// order of the inputs.
func TestMergeRetriedShard(t *testing.T) {
	a, b := passResult("a"), passResult("a")
	a.Wall, b.Wall = 3*time.Second, 2*time.Second
	for _, in := range [][]gate.Result{{a, b}, {b, a}} {
		merged, err := gate.MergeResults(in)
		require.NoError(t, err)
		require.Equal(t, []gate.Result{b}, merged)
	}
}
