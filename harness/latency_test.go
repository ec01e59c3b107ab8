package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMeasuredLatencyIsCaught: inside the bubbles every replayed response
// takes a run-dependent amount of fake time, so a pipeline that puts the
// measured latency of its LLM call into its output is caught in the test
// process.
func TestMeasuredLatencyIsCaught(t *testing.T) {
	cassette := recordCassette(t, t.TempDir(), "latency", "hello")
	s := func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		text, err := complete(ctx, client, "hello")
		took := time.Since(start)
		return fmt.Appendf(nil, "%s (answered in %v)", text, took), err
	}
	rep := Config{Iterations: 20, Processes: -1}.check(t, "latency-in-output", s, false)
	require.Equal(t, Nondeterministic, rep.Verdict, "%s", rep)
	require.Len(t, rep.Classes, 20, "every run measured another latency")
	require.NotNil(t, rep.Divergence.Output)
	require.Contains(t, rep.Divergence.Output.ExcerptA, "answered in ")
	require.Empty(t, rep.ReRecordCommand)

	// The same pipeline without the measurement passes.
	rep = Config{Iterations: 20, Processes: -1}.check(t, "latency-not-in-output", func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		text, err := complete(ctx, client, "hello")
		return []byte(text), err
	}, false)
	require.Equal(t, Pass, rep.Verdict, "%s", rep)
}

func TestDefaultLatency(t *testing.T) {
	seen := map[time.Duration]bool{}
	for run := range 50 {
		d := defaultLatency(run, 0)
		require.GreaterOrEqual(t, d, time.Millisecond)
		require.Less(t, d, 2*time.Second)
		seen[d] = true
	}
	require.Len(t, seen, 50, "every run of a default gate gets another latency")
	require.NotEqual(t, defaultLatency(3, 0), defaultLatency(3, 1), "and every call of a run")
}
