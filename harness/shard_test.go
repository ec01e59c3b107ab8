package harness_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/gateflags"
)

// shardSuite is the suite the sharding test runs: passing scenarios, a
// nondeterministic one and a broken one.
var shardSuite = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"}

// TestShardSuite is run by TestShardedGateMatchesUnsharded in child
// processes, once unsharded and once per shard.
func TestShardSuite(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	runGate := func(shard string) string {
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
				if gateflags.Of(name, n) == i {
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
	whole, err := gate.ReadResults(runGate(""))
	require.NoError(t, err)
	require.Len(t, whole, len(shardSuite))
	var unsharded bytes.Buffer
	require.NoError(t, gate.WriteSummary(&unsharded, whole))

	var shards [][]gate.Result
	for i := range 3 {
		rs, err := gate.ReadResults(runGate(fmt.Sprintf("%d/3", i)))
		require.NoError(t, err)
		require.Len(t, rs, len(shardSuite), "each shard reports every scenario, run or skipped")
		shards = append(shards, rs)
	}
	all := append(append(append([]gate.Result{}, shards[0]...), shards[1]...), shards[2]...)
	merged, err := gate.MergeResults(all)
	require.NoError(t, err)
	require.Len(t, merged, len(shardSuite))
	var sharded bytes.Buffer
	require.NoError(t, gate.WriteSummary(&sharded, merged))
	require.Equal(t, unsharded.String(), sharded.String())
	for i, r := range merged {
		require.Equal(t, whole[i].Scenario, r.Scenario)
		require.Equal(t, whole[i].Verdict, r.Verdict)
		require.Equal(t, whole[i].Classes, r.Classes)
	}
	t.Logf("unsharded and merged summary:\n%s", sharded.String())

	// Merging twice, or with a shard included twice, changes nothing.
	again, err := gate.MergeResults(append(all, shards[1]...))
	require.NoError(t, err)
	require.Equal(t, merged, again)

	// Without shard 1 its scenarios are missing.
	_, err = gate.MergeResults(append(append([]gate.Result{}, shards[0]...), shards[2]...))
	require.ErrorContains(t, err, "scenario missing from the merged results")
	require.ErrorContains(t, err, "shard 1/3")

	// Results written by the merge read back the same.
	dir := t.TempDir()
	for _, r := range merged {
		_, err := r.Save(dir)
		require.NoError(t, err)
	}
	back, err := gate.ReadResults(dir)
	require.NoError(t, err)
	require.ElementsMatch(t, withoutFolder(merged), withoutFolder(back))
	_, err = os.Stat(filepath.Join(dir))
	require.NoError(t, err)
}

// withoutFolder returns rs with no Folder: what their files hold.
func withoutFolder(rs []gate.Result) []gate.Result {
	out := make([]gate.Result, len(rs))
	for i, r := range rs {
		r.Folder = ""
		out[i] = r
	}
	return out
}

// TestGateLedger: a test process appends nothing to a ledger. Under
// -gate.ledger every Check fails saying to append the results with
// gate-merge instead; CODEGENIE_LEDGER, the ledger command's DSN, which a
// CI may hand every job, is not read: the gates run and write their
// results, and the first Check notes how to append them.
func TestGateLedger(t *testing.T) {
	t.Parallel()
	suite := func(t *testing.T, env string, args ...string) string {
		cmd := exec.CommandContext(t.Context(), os.Args[0], append([]string{"-test.run=^TestShardSuite$", "-test.v"}, args...)...)
		cmd.Env = append(os.Environ(), "HARNESS_SHARD_SUITE=1", "CODEGENIE_GATE_SHARD=0/2", env)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			require.NoError(t, err, "%s", out)
		}
		return string(out)
	}
	const gateMerge = "go run github.com/codegenie/codegenie/cmd/gate-merge -ledger DSN RESULTS_DIR"
	t.Run("flag", func(t *testing.T) {
		dsn := filepath.Join(t.TempDir(), "ledger.jsonl")
		out := suite(t, "", "-gate.ledger="+dsn)
		require.Contains(t, out, "harness: -gate.ledger="+dsn+": a test process appends nothing to a ledger; write the results with -gate.results=DIR and append them with "+gateMerge)
		for _, s := range shardSuite {
			if gateflags.Of(s, 2) == 0 {
				require.Contains(t, out, "--- FAIL: TestShardSuite/"+s+" ")
			}
		}
		require.NoFileExists(t, dsn)
	})
	t.Run("environment", func(t *testing.T) {
		dsn := filepath.Join(t.TempDir(), "ledger.jsonl")
		results := t.TempDir()
		out := suite(t, "CODEGENIE_LEDGER="+dsn, "-gate.results="+results)
		require.Equal(t, 1, strings.Count(out, "harness: CODEGENIE_LEDGER is set, but a test process appends nothing to a ledger: append the results of -gate.results=DIR with "+gateMerge), out)
		require.Contains(t, out, "--- PASS: TestShardSuite/", out)
		rs, err := gate.ReadResults(results)
		require.NoError(t, err)
		require.Len(t, rs, len(shardSuite))
		require.NoFileExists(t, dsn)
	})
}

func TestBadShardFlag(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestShardSuite$")
	cmd.Env = append(os.Environ(), "HARNESS_SHARD_SUITE=1", "CODEGENIE_GATE_SHARD=3/3")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "want i/n with 0 <= i < n")
}
