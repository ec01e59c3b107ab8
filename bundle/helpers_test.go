package bundle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/tapetest"
)

// testKinds are this package's made-up kinds as the steps of a
// realistic run (tapetest.Realistic).
var testKinds = tapetest.Kinds{
	Start: kindStarted, Query: kindQueried, Rank: kindRanked, Classify: kindClassified,
	Build: kindBuilt, Request: kindRequested, Respond: kindResponded, Produce: kindProduced,
}

// realisticRun records one run shaped like package fallback's tape
// (tapetest.Realistic, under this package's made-up kinds). variant
// changes the completion, so two variants diverge at the kindResponded
// event.
func realisticRun(t testing.TB, variant int) []events.Event {
	t.Helper()
	return realisticRunOf(t, 0, variant)
}

// realisticRunOf is realisticRun for one of tapetest.Scenarios scenarios
// (advisories).
func realisticRunOf(t testing.TB, scenario, variant int) []events.Event {
	t.Helper()
	evs, err := tapetest.Realistic(testKinds, scenario, variant)
	require.NoError(t, err)
	return evs
}

// syntheticTape returns n events with payloadSize-byte JSON payloads, dense
// seqs, each the child of the previous, with timestamps and IDs set.
func syntheticTape(t testing.TB, n, payloadSize int) []events.Event {
	t.Helper()
	return syntheticEvents(n, payloadSize)
}

// syntheticEvents is syntheticTape outside a test.
func syntheticEvents(n, payloadSize int) []events.Event {
	return tapetest.Synthetic(testKinds.List(), n, payloadSize)
}

func syntheticPayload(i, size int) []byte { return tapetest.Payload(i, size) }

func testMeta() Metadata {
	return Metadata{Scenario: "lodash-prototype-pollution", GoVersion: "go1.26.8", ToolVersion: "test"}
}

func testPin() map[string]string {
	return map[string]string{"run_key": "rk-0123456789abcdef", "cassette_id": "cas-1", "store_digest": "store-1"}
}

// single returns a bundle of one run holding evs.
func single(evs []events.Event) *Bundle {
	return &Bundle{Metadata: testMeta(), Runs: []Run{{ID: "run-000", Pin: testPin(), Output: []byte("+lodash 4.17.21\n"), Events: evs}}}
}

// manyRuns returns a bundle of the given tapes as runs run-000, run-001, ...
func manyRuns(tapes ...[]events.Event) *Bundle {
	b := &Bundle{Metadata: testMeta()}
	for i, evs := range tapes {
		b.Runs = append(b.Runs, Run{ID: fmt.Sprintf("run-%03d", i), Pin: testPin(), Output: fmt.Appendf(nil, "output %d\n", i%2), Events: evs})
	}
	return b
}

// writeBoth writes b in both forms under a fresh temp dir and returns the
// directory and file paths.
func writeBoth(t testing.TB, b *Bundle) (dir, file string) {
	t.Helper()
	root := t.TempDir()
	dir, file = filepath.Join(root, "run.bundle"), filepath.Join(root, "run"+FileExt)
	require.NoError(t, Config{}.Write(context.Background(), dir, b))
	require.NoError(t, Config{}.WriteFile(context.Background(), file, b))
	return dir, file
}

// copyDir copies a directory bundle (regular files only).
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.bundle")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func writeFileBytes(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
