package harness

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// raceEnabled is set under -race, where the rate measurements run fewer
// gates to keep the suite fast.
var raceEnabled bool

// gateOnce runs one gate over p exactly as Check does (a synctest bubble
// per run) but returns the report instead of failing t.
func gateOnce(t *testing.T, cfg Config, p toyPipeline) *Report {
	t.Helper()
	if cfg.ArtifactDir == "" {
		cfg.ArtifactDir = t.TempDir()
	}
	rc, err := cfg.resolve()
	require.NoError(t, err)
	b := &bubbleRunner{t: t, reported: map[int]bool{}}
	rep, _ := iterate(context.Background(), rc, "toy-"+p.bug, p.run, env{isolation: "synctest", run: b.run, noEvidence: true})
	require.NotNil(t, rep)
	return rep
}

// TestSensitivity proves that the gate catches each class of determinism
// bug it exists for, and names the right event, over many gate runs.
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
		field     string
		output    bool // the output bytes differ too
		payloadAt string
	}{
		{"map-iteration-into-prompt", "map", toyIdxPrompt, kindBuilt, "Payload", false, `["prompt"]`},
		{"fan-out-completion-order", "fanout", toyIdxRanked, kindRanked, "Payload", false, `["ids"]`},
		{"time-now-in-payload", "clock", toyIdxRequested, kindRequested, "Payload", false, `["sent_at"]`},
		{"package-cache-across-runs", "cache", toyIdxQueried, kindQueried, "Payload", false, `["cached"]`},
		{"random-id-in-output", "random", toyIdxTransform, kindProduced, "Payload", true, `["diff_digest"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caught, right := 0, 0
			dir := t.TempDir()
			var sample *Report
			for range gates {
				resetToyCache() // each gate run stands for a fresh process
				rep := gateOnce(t, Config{ArtifactDir: dir}, toyPipeline{bug: tt.bug})
				if !errors.Is(rep.Err(), ErrNondeterministic) {
					continue
				}
				caught++
				d := rep.Divergence
				if d.Event != nil && d.Event.Index == tt.index && d.Event.Kind == tt.kind && d.Event.Field == tt.field &&
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
			require.Equal(t, caught, right, "every catch names event %d (%s), field %s:\n%s", tt.index, tt.kind, tt.field, sample)
			require.Contains(t, sample.String(), tt.payloadAt)
			require.Contains(t, sample.String(), "causal chain")
		})
	}
}

// TestNoFalsePositives runs the clean pipeline for 1000 iterations.
func TestNoFalsePositives(t *testing.T) {
	iters := 1000
	if testing.Short() || raceEnabled {
		iters = 200
	}
	rep := gateOnce(t, Config{Iterations: iters}, toyPipeline{})
	require.NoError(t, rep.Err(), "%s", rep)
	require.Equal(t, iters, rep.Runs)
	require.Equal(t, 1, rep.DistinctOutputs)
	require.Equal(t, 1, rep.DistinctTapes)
	t.Logf("clean pipeline: %d iterations, %d distinct outputs, %d distinct tapes, 0 false positives, %v", rep.Runs, rep.DistinctOutputs, rep.DistinctTapes, rep.Wall)
}
