package replay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/replay"
)

// tierRun runs the fallback tier (fixtures.NewTier over the in-process
// fake LLM) on a fixture scenario, the way the determinism gate does:
// iteration i gets its own clock and audit IDs. retry selects the
// scenario's prior attempts (the retry-bypass path).
func tierRun(t testing.TB, name string, retry bool, i int) []events.Event {
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
	return res.Events
}

// concatRuns renumbers runs into one dense tape, as a shard that holds
// several iterations would.
func concatRuns(runs [][]events.Event) []events.Event {
	var out []events.Event
	for _, r := range runs {
		base := uint64(len(out))
		for _, e := range r {
			e.Seq += base
			if e.Parent != 0 {
				e.Parent += base
			}
			out = append(out, e)
		}
	}
	return out
}

// rawSize is the tape as the harness writes it (run-NNN.tape): the
// canonical records back to back.
func rawSize(evs []events.Event) int {
	n := 0
	for _, e := range evs {
		n += len(events.AppendRecord(nil, e))
	}
	return n
}

func tierMeta(scenario, run string) replay.Metadata {
	return replay.Metadata{
		Pin:      replay.Pin{RunKey: "rk-" + scenario, CassetteID: "", StoreDigest: "store", RepoSnapshotSHA: "0123456789abcdef0123456789abcdef01234567", EmbeddingModelDigest: "emb"},
		Scenario: scenario, Run: run, GoVersion: "go1.26.8", ToolVersion: "codegenie/harness", Status: replay.StatusCaptured,
	}
}

// BenchmarkCompressionTier measures the single-file form on tapes the gate
// really produces: fallback tier runs over the fixture scenarios (prompt
// text, completion, diff, JSON payloads). "one" is one run per bundle,
// exactly what the gate leaves as evidence (happy and retry path of each
// scenario; the ratio is over all six bundles); "iterations=50" is 50 gate
// iterations of each scenario and path concatenated into one tape per
// bundle. ratio is the raw tape (canonical records, the harness's
// run-NNN.tape) over the single file; dir-ratio the directory form over
// the single file.
func BenchmarkCompressionTier(b *testing.B) {
	for _, iters := range []int{1, 50} {
		var tapes [][]events.Event
		var names []string
		for _, sc := range fixtures.Scenarios() {
			for _, retry := range []bool{false, true} {
				var runs [][]events.Event
				for i := range iters {
					runs = append(runs, tierRun(b, sc.Name, retry, i))
				}
				tapes = append(tapes, concatRuns(runs))
				names = append(names, fmt.Sprintf("%s-retry=%v", sc.Name, retry))
			}
		}
		name := "one"
		if iters > 1 {
			name = fmt.Sprintf("iterations=%d", iters)
		}
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			var raw, file, dir int64
			for b.Loop() {
				raw, file, dir = 0, 0, 0
				for i, evs := range tapes {
					p := filepath.Join(root, names[i]+replay.FileExt)
					d := filepath.Join(root, names[i]+".bundle")
					bd := &replay.Bundle{Metadata: tierMeta(names[i], "run-000"), Events: evs}
					if err := replay.WriteFile(context.Background(), p, bd); err != nil {
						b.Fatal(err)
					}
					if err := replay.Write(context.Background(), d, bd); err != nil {
						b.Fatal(err)
					}
					fi, err := os.Stat(p)
					if err != nil {
						b.Fatal(err)
					}
					raw += int64(rawSize(evs))
					file += fi.Size()
					dir += replay.TreeSize(b, d)
				}
			}
			b.ReportMetric(float64(raw)/float64(file), "ratio")
			b.ReportMetric(float64(dir)/float64(file), "dir-ratio")
			b.ReportMetric(float64(file)/float64(len(tapes)), "file-bytes/bundle")
			b.ReportMetric(float64(raw)/float64(len(tapes)), "raw-bytes/bundle")
		})
	}
}
