package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/ledger"
)

// gatedTest is a user's module: three scenarios gated by harness.Check.
// Each pins a cassette and a model (its key) and outputs a fixed text.
const gatedTest = `package gated

import (
	"context"
	"testing"

	"github.com/codegenie/codegenie/harness"
)

func TestGate(t *testing.T) {
	for _, sc := range []string{"alpha", "beta", "gamma"} {
		t.Run(sc, func(t *testing.T) {
			harness.Check(t, sc, func(ctx context.Context, run *harness.Run) ([]byte, error) {
				run.Pin("cassette_id", Cassette[sc])
				run.Pin("model", "m1")
				run.Recorder().Emit("step.done", map[string]string{"scenario": sc})
				return []byte(Output[sc]), nil
			})
		})
	}
}
`

// pipeline returns the module's pipeline: per scenario, its cassette and
// its output.
func pipeline(cassettes, outputs [3]string) string {
	return fmt.Sprintf(`package gated

var Cassette = map[string]string{"alpha": %q, "beta": %q, "gamma": %q}

var Output = map[string]string{"alpha": %q, "beta": %q, "gamma": %q}
`, cassettes[0], cassettes[1], cassettes[2], outputs[0], outputs[1], outputs[2])
}

// TestEndToEnd: a gate run in a user's module writes three results, which
// gate-merge appends to the ledger as three entries; the
// pipeline then changes so that beta's output moves under the same key and
// gamma's key moves; rerun -strict exits 1 naming beta as diverged and
// gamma as not comparable because its cassette moved.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a module with go test")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	mod := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644))
	}
	write("go.mod", "module example.com/gated\n\ngo 1.26\n\nrequire github.com/codegenie/codegenie v0.0.0\n\nreplace github.com/codegenie/codegenie => "+root+"\n")
	write("gate_test.go", gatedTest)
	write("pipeline.go", pipeline([3]string{"ca", "cb", "cg"}, [3]string{"out-a", "out-b", "out-g"}))
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("CODEGENIE_LEDGER", "")
	ledgerPath := filepath.Join(t.TempDir(), "ledger.jsonl")

	results := filepath.Join(t.TempDir(), "results")
	goTest := exec.Command("go", "test", "-count=1", ".", "-args", "-gate.results="+results)
	goTest.Dir = mod
	out, err := goTest.CombinedOutput()
	require.NoError(t, err, "%s", out)
	merge := exec.Command("go", "run", "github.com/codegenie/codegenie/cmd/gate-merge", "-ledger", ledgerPath, results)
	merge.Dir = mod
	out, err = merge.CombinedOutput()
	require.NoError(t, err, "%s", out)

	s, err := ledger.Open(context.Background(), ledgerPath)
	require.NoError(t, err)
	var entries []ledger.Entry
	require.NoError(t, s.Entries(context.Background(), 0, 0, func(e ledger.Entry) error {
		entries = append(entries, e)
		return nil
	}))
	require.NoError(t, s.Close())
	require.Len(t, entries, 3)
	for i, sc := range []string{"alpha", "beta", "gamma"} {
		e := entries[i]
		require.Equal(t, sc, e.Scenario)
		require.Equal(t, gate.Pass, e.Verdict)
		require.Equal(t, "TestGate/"+sc, e.Test)
		require.Equal(t, ".", e.Package)
		require.Equal(t, map[string]string{"cassette_id": "c" + sc[:1], "model": "m1"}, e.Components)
		require.NotEmpty(t, e.OutputDigest)
	}

	// The same code reruns clean.
	report := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := invoke(t, app{getenv: os.Getenv, now: testApp(nil).now, evaluator: goTestEvaluator, revision: gitRevision},
		"rerun", "-ledger", ledgerPath, "-from", "1", "-to", "3", "-strict", "-dir", mod)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	require.Contains(t, stdout, "3 same")

	write("pipeline.go", pipeline([3]string{"ca", "cb", "cg2"}, [3]string{"out-a", "out-b2", "out-g"}))
	code, stdout, stderr = invoke(t, app{getenv: os.Getenv, now: testApp(nil).now, evaluator: goTestEvaluator, revision: gitRevision},
		"rerun", "-ledger", ledgerPath, "-from", "1", "-to", "3", "-strict", "-output", report, "-dir", mod)
	require.Equal(t, 1, code, "%s\n%s", stdout, stderr)
	require.Contains(t, stderr, "at seq [2]")

	b, err := os.ReadFile(report)
	require.NoError(t, err)
	var rep ledger.RerunReport
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Items, 3)
	require.Equal(t, "same", rep.Items[0].Status)
	beta := rep.Items[1]
	require.Equal(t, uint64(2), beta.Seq)
	require.Equal(t, "beta", beta.Scenario)
	require.Equal(t, "diverged", beta.Status)
	require.Equal(t, []string{"output_digest"}, beta.Differs)
	require.NotEqual(t, beta.RecordedOutput, beta.CurrentOutput)
	gamma := rep.Items[2]
	require.Equal(t, "not_comparable", gamma.Status)
	require.Equal(t, []string{"cassette_id"}, gamma.Moved)
	require.True(t, strings.Contains(stdout, "moved: [cassette_id]"), stdout)

	// Both reruns were appended (3 + 3 + 3 entries) and the chain holds.
	code, stdout, _ = invoke(t, testApp(nil), "verify", "-ledger", ledgerPath)
	require.Equal(t, 0, code, stdout)
	require.Contains(t, stdout, "9 entries")
}
