package bundle_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fixtures"
)

// tierRun runs the fallback tier (fixtures.NewTier over the in-process
// fake LLM) on a fixture scenario, the way the determinism gate does:
// iteration i gets its own clock and audit IDs. retry selects the
// scenario's prior attempts (the retry-bypass path). It returns the tape
// and the output (the transform's diff).
func tierRun(t testing.TB, name string, retry bool, i int) ([]events.Event, []byte) {
	t.Helper()
	s, ok := fixtures.Lookup(name)
	require.True(t, ok, name)
	clock := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	n := 0
	tier, err := fixtures.NewTier(fixtures.TierConfig{
		HTTPClient: fixtures.FakeHTTPClient(),
		Clock:      func() time.Time { clock = clock.Add(1733 * time.Microsecond); return clock },
		NewID:      func() string { n++; return fmt.Sprintf("audit-%03d-%04d", i, n) },
	})
	require.NoError(t, err)
	prior := s.Prior
	if !retry {
		prior = nil
	}
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, prior)
	require.NoError(t, err)
	require.NotEmpty(t, res.Events)
	return res.Events, res.Transform.DiffBytes
}

// tierBundle is a bundle of the given runs of one scenario and path, as
// the gate keeps them: each run its own ID, output and tape.
func tierBundle(scenario string, tapes [][]events.Event, outputs [][]byte) *bundle.Bundle {
	b := &bundle.Bundle{Metadata: bundle.Metadata{Scenario: scenario, ToolVersion: "codegenie/harness", GoVersion: "go1.26.8"}}
	for i, evs := range tapes {
		b.Runs = append(b.Runs, bundle.Run{ID: fmt.Sprintf("run-%03d", i), Pin: map[string]string{"run_key": "rk-" + scenario},
			Output: outputs[i], Events: evs})
	}
	return b
}

// BenchmarkCompressionTier measures the single-file form on runs the gate
// really produces: fallback tier runs over the fixture scenarios (prompt
// text, completion, diff, JSON payloads), happy and retry path each.
// runs=1 is a bundle of one run; runs=50 a bundle of 50 gate iterations
// of one scenario and path, each its own run. ratio is the raw runs
// (bundle.RawSize: their canonical records and outputs) over the single
// file, summed over the six bundles; dir-ratio the directory form over
// the single file. A ratio under 10 for 50 runs fails the benchmark.
func BenchmarkCompressionTier(b *testing.B) {
	for _, iters := range []int{1, 50} {
		var bundles []*bundle.Bundle
		var names []string
		for _, sc := range fixtures.Scenarios() {
			for _, retry := range []bool{false, true} {
				var tapes [][]events.Event
				var outputs [][]byte
				for i := range iters {
					evs, out := tierRun(b, sc.Name, retry, i)
					tapes, outputs = append(tapes, evs), append(outputs, out)
				}
				name := fmt.Sprintf("%s-retry=%v", sc.Name, retry)
				bundles, names = append(bundles, tierBundle(name, tapes, outputs)), append(names, name)
			}
		}
		b.Run(fmt.Sprintf("runs=%d", iters), func(b *testing.B) {
			root := b.TempDir()
			var raw, file, dir int64
			for b.Loop() {
				raw, file, dir = 0, 0, 0
				for i, bd := range bundles {
					p := filepath.Join(root, names[i]+bundle.FileExt)
					d := filepath.Join(root, names[i]+".bundle")
					o := bundle.Config{Force: true}
					if err := o.WriteFile(context.Background(), p, bd); err != nil {
						b.Fatal(err)
					}
					if err := o.Write(context.Background(), d, bd); err != nil {
						b.Fatal(err)
					}
					fi, err := os.Stat(p)
					if err != nil {
						b.Fatal(err)
					}
					raw += int64(bundle.RawSize(bd))
					file += fi.Size()
					dir += bundle.TreeSize(b, d)
				}
			}
			ratio := float64(raw) / float64(file)
			b.ReportMetric(ratio, "ratio")
			b.ReportMetric(float64(dir)/float64(file), "dir-ratio")
			b.ReportMetric(float64(file)/float64(len(bundles)), "file-bytes/bundle")
			b.ReportMetric(float64(raw)/float64(len(bundles)), "raw-bytes/bundle")
			if iters >= 50 && ratio < 10 {
				b.Fatalf("a bundle of %d runs of one scenario compresses %.1fx; the format promises at least 10x", iters, ratio)
			}
		})
	}
}
