package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/ledger"
)

// shardSuite is the suite the sharding test runs: passing scenarios, a
// nondeterministic one and a broken one.
var shardSuite = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"}

// TestShardSuite is run by TestShardedGateMatchesUnsharded in child
// processes, once unsharded and once per shard.
func TestShardSuite(t *testing.T) {
	if os.Getenv("HARNESS_SHARD_SUITE") == "" {
		t.Skip("run by TestShardedGateMatchesUnsharded")
	}
	for _, name := range shardSuite {
		t.Run(name, func(t *testing.T) {
			harness.Config{Iterations: 20, Processes: -1}.Check(t, name, func(ctx context.Context, run *harness.Run) ([]byte, error) {
				run.Pin("scenario", name)
				switch {
				case name == "delta" && run.Index()%5 == 3:
					return []byte("other"), nil
				case name == "golf":
					return nil, fmt.Errorf("golf is broken")
				}
				return []byte("out of " + name), nil
			})
		})
	}
}

// TestShardedGateMatchesUnsharded: three shards plus a merge give the
// verdicts and the summary of the unsharded gate; without one shard the
// merge fails.
func TestShardedGateMatchesUnsharded(t *testing.T) {
	gate := func(shard string) string {
		dir := t.TempDir()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestShardSuite$", "-test.v", "-gate.results="+dir)
		cmd.Env = append(os.Environ(), "HARNESS_SHARD_SUITE=1", "CODEGENIE_GATE_SHARD="+shard)
		// delta and golf fail the suite in the shards that run them.
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			require.NoError(t, err, "%s", out)
		}
		// A scenario of another shard is reported as skipped, not passed.
		var i, n int
		if _, err := fmt.Sscanf(shard, "%d/%d", &i, &n); err == nil {
			for _, name := range shardSuite {
				verdict := "SKIP"
				if harness.ShardOf(name, n) == i {
					verdict = "PASS"
					if name == "delta" || name == "golf" {
						verdict = "FAIL"
					}
				}
				require.Contains(t, string(out), "--- "+verdict+": TestShardSuite/"+name+" ", "shard %s", shard)
			}
		}
		return dir
	}
	whole, err := harness.ReadResults(gate(""))
	require.NoError(t, err)
	require.Len(t, whole, len(shardSuite))
	var unsharded bytes.Buffer
	require.NoError(t, harness.WriteSummary(&unsharded, whole))

	var shards [][]harness.Result
	for i := range 3 {
		rs, err := harness.ReadResults(gate(fmt.Sprintf("%d/3", i)))
		require.NoError(t, err)
		require.Len(t, rs, len(shardSuite), "each shard reports every scenario, run or skipped")
		shards = append(shards, rs)
	}
	all := append(append(append([]harness.Result{}, shards[0]...), shards[1]...), shards[2]...)
	merged, err := harness.MergeResults(all)
	require.NoError(t, err)
	require.Len(t, merged, len(shardSuite))
	var sharded bytes.Buffer
	require.NoError(t, harness.WriteSummary(&sharded, merged))
	require.Equal(t, unsharded.String(), sharded.String())
	for i, r := range merged {
		require.Equal(t, whole[i].Scenario, r.Scenario)
		require.Equal(t, whole[i].Verdict, r.Verdict)
		require.Equal(t, whole[i].Classes, r.Classes)
	}
	t.Logf("unsharded and merged summary:\n%s", sharded.String())

	// Merging twice, or with a shard included twice, changes nothing.
	again, err := harness.MergeResults(append(all, shards[1]...))
	require.NoError(t, err)
	require.Equal(t, merged, again)

	// Without shard 1 its scenarios are missing.
	_, err = harness.MergeResults(append(append([]harness.Result{}, shards[0]...), shards[2]...))
	require.ErrorIs(t, err, harness.ErrMissingScenario)
	require.ErrorContains(t, err, "shard 1/3")

	// Results written by the merge read back the same.
	dir := t.TempDir()
	for _, r := range merged {
		_, err := harness.WriteResult(dir, r)
		require.NoError(t, err)
	}
	back, err := harness.ReadResults(dir)
	require.NoError(t, err)
	require.ElementsMatch(t, merged, back)
	_, err = os.Stat(filepath.Join(dir))
	require.NoError(t, err)
}

// TestGateLedger: with -gate.ledger every verdict of a gate is appended
// to the ledger, skipped scenarios excepted, with what re-runs it.
func TestGateLedger(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestShardSuite$", "-gate.ledger="+dsn)
	cmd.Env = append(os.Environ(), "HARNESS_SHARD_SUITE=1", "CODEGENIE_GATE_SHARD=0/2")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, "%s", out)
	}
	st, err := ledger.Open(t.Context(), dsn)
	require.NoError(t, err)
	defer st.Close()
	var got []ledger.Entry
	require.NoError(t, st.Scan(t.Context(), 1, 0, func(r ledger.Record) error {
		var e ledger.Entry
		if err := json.Unmarshal(r.Body, &e); err != nil {
			return err
		}
		got = append(got, e)
		return nil
	}))
	var want []string
	for _, s := range shardSuite {
		if harness.ShardOf(s, 2) == 0 {
			want = append(want, s)
		}
	}
	require.Len(t, got, len(want), "one entry per scenario of the shard:\n%s", out)
	for _, e := range got {
		require.Contains(t, want, e.Scenario)
		require.Equal(t, "TestShardSuite/"+e.Scenario, e.Test)
		require.Equal(t, "harness", e.Package)
		require.Equal(t, harness.Key(map[string]string{"scenario": e.Scenario}), e.Key)
		require.Equal(t, map[string]string{"scenario": e.Scenario}, e.Components)
		require.Equal(t, 20, e.Runs)
		require.NotEmpty(t, e.Classes)
	}
}

func TestMergeConflict(t *testing.T) {
	r := harness.Result{Format: harness.ResultFormat, Scenario: "a", Test: "T", Package: "p", Verdict: harness.Pass, Runs: 50}
	other := r
	other.Runs = 49
	_, err := harness.MergeResults([]harness.Result{r, other})
	require.ErrorIs(t, err, harness.ErrConflict)
	merged, err := harness.MergeResults([]harness.Result{r, r})
	require.NoError(t, err)
	require.Len(t, merged, 1, "identical duplicates are kept once")
}

func TestBadShardFlag(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestShardSuite$")
	cmd.Env = append(os.Environ(), "HARNESS_SHARD_SUITE=1", "CODEGENIE_GATE_SHARD=3/3")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "want i/n with 0 <= i < n")
}
