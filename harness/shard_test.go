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
	"strings"
	"testing"
	"time"

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
	require.ElementsMatch(t, withoutFolder(merged), withoutFolder(back))
	_, err = os.Stat(filepath.Join(dir))
	require.NoError(t, err)
}

// withoutFolder returns rs with no Folder: what their files hold.
func withoutFolder(rs []harness.Result) []harness.Result {
	out := make([]harness.Result, len(rs))
	for i, r := range rs {
		r.Folder = ""
		out[i] = r
	}
	return out
}

// TestGateLedger: with -gate.ledger every verdict of a gate is appended
// to the ledger, skipped scenarios excepted, with what reruns it.
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
	r := harness.Result{Scenario: "a", Test: "T", Package: "p", Verdict: harness.Pass, Runs: 50}
	other := r
	other.Runs = 49
	_, err := harness.MergeResults([]harness.Result{r, other})
	require.ErrorIs(t, err, harness.ErrConflict)
	merged, err := harness.MergeResults([]harness.Result{r, r})
	require.NoError(t, err)
	require.Len(t, merged, 1, "identical duplicates are kept once")
}

// TestShardOfIsStable: a scenario's shard is FNV-1a of its name modulo n,
// the same on every machine and in every release, so the shards of one CI
// matrix never disagree.
func TestShardOfIsStable(t *testing.T) {
	for name, want := range map[string]int{"npm-lodash/happy": 1, "npm-lodash/retry": 1, "go-xnet/happy": 0} {
		require.Equal(t, want, harness.ShardOf(name, 4), name)
	}
}

func TestBadShardFlag(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestShardSuite$")
	cmd.Env = append(os.Environ(), "HARNESS_SHARD_SUITE=1", "CODEGENIE_GATE_SHARD=3/3")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "want i/n with 0 <= i < n")
}

// passResult is a result that passes: verdict PASS, 50 runs in one
// class, floor 20.
func passResult(scenario string) harness.Result {
	return harness.Result{Scenario: scenario, Test: "TestGate/" + scenario, Package: "p",
		Verdict: harness.Pass, Iterations: 50, Runs: 50, Floor: 20, Classes: []harness.Class{{Size: 50}}}
}

// TestResultErr: the verdict decides, not the failure text: every result
// that is not PASS over at least its floor fails, naming the field.
func TestResultErr(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *harness.Result)
		field string // "" when the result passes
	}{
		{"pass", func(r *harness.Result) {}, ""},
		{"skipped", func(r *harness.Result) { r.Verdict, r.Runs, r.Classes = harness.Skipped, 0, nil }, ""},
		{"nondeterministic", func(r *harness.Result) { r.Verdict = harness.Nondeterministic }, `verdict is NONDETERMINISTIC`},
		{"broken", func(r *harness.Result) { r.Verdict = harness.Broken }, `verdict is BROKEN`},
		{"unknown-word", func(r *harness.Result) { r.Verdict = "FINE" }, `verdict is FINE, want PASS`},
		{"escaped-word", func(r *harness.Result) { r.Verdict = "PASS\x1b[2J" }, `verdict is "PASS\x1b[2J"`},
		{"failure-text", func(r *harness.Result) { r.Failure = "boom\nmore" }, `failure is boom`},
		{"zero-runs", func(r *harness.Result) { r.Runs, r.Classes[0].Size = 0, 0 }, "runs is 0, want at least 1"},
		{"below-floor", func(r *harness.Result) { r.Runs, r.Classes[0].Size = 19, 19 }, "runs is 19, below the floor of 20"},
		{"zero-floor", func(r *harness.Result) { r.Floor = 0 }, "floor is 0"},
		{"two-classes", func(r *harness.Result) { r.Classes = append(r.Classes, harness.Class{Size: 1}) }, "classes has 2 entries"},
		{"class-size", func(r *harness.Result) { r.Classes[0].Size = 49 }, "classes[0].size is 49, want runs (50)"},
		{"class-error", func(r *harness.Result) { r.Classes[0].ErrorKind = "panic" }, "classes[0].error_kind is panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := passResult("s\x1b]0;x\x07")
			tt.edit(&r)
			err := r.Err()
			if tt.field == "" {
				require.NoError(t, err)
				require.True(t, r.OK())
				return
			}
			require.ErrorContains(t, err, ": not a pass: ")
			require.False(t, r.OK())
			require.Contains(t, err.Error(), tt.field)
			require.Contains(t, err.Error(), `scenario "s\x1b]0;x\a"`, "the name is quoted")
			require.NotContains(t, err.Error(), "\x1b", "no raw escape")
			var sb strings.Builder
			require.NoError(t, harness.WriteSummary(&sb, []harness.Result{r}))
			require.Contains(t, sb.String(), "== determinism gate: FAIL ==")
			require.NotContains(t, sb.String(), "\x1b", "no raw escape in the summary")
		})
	}
}

// TestReadResultRefuses: a result file is a regular file of valid shape:
// bad shards and negative counts are refused naming the field, a FIFO or
// a symbolic link is refused without being opened.
func TestReadResultRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(r *harness.Result)
		want string
	}{
		{"shard-7/2", func(r *harness.Result) { r.Shard = "7/2" }, "shard is 7/2"},
		{"shard-0/0", func(r *harness.Result) { r.Shard = "0/0" }, "shard is 0/0"},
		{"shard-junk", func(r *harness.Result) { r.Shard = "a/b" }, "shard is a/b"},
		{"negative-runs", func(r *harness.Result) { r.Runs = -5 }, "runs is -5"},
		{"negative-floor", func(r *harness.Result) { r.Floor = -1 }, "floor is -1"},
		{"negative-class", func(r *harness.Result) { r.Classes[0].Size = -50 }, "classes[0].size is -50"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := passResult("a")
			tt.edit(&r)
			dir := t.TempDir()
			p, err := harness.WriteResult(dir, r)
			require.NoError(t, err)
			_, err = harness.ReadResult(p)
			require.ErrorIs(t, err, harness.ErrBadResult)
			require.ErrorContains(t, err, tt.want)
			_, err = harness.MergeResults([]harness.Result{r})
			require.ErrorIs(t, err, harness.ErrBadResult)
		})
	}
	t.Run("fifo", func(t *testing.T) {
		dir := t.TempDir()
		_, err := harness.WriteResult(dir, passResult("a"))
		require.NoError(t, err)
		fifo := filepath.Join(dir, "zz.json")
		if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
			t.Skipf("no mkfifo here: %v %s", err, out)
		}
		done := make(chan error, 1)
		go func() { _, err := harness.ReadResults(dir); done <- err }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, harness.ErrBadResult)
			require.ErrorContains(t, err, "zz.json is not a regular file")
		case <-time.After(10 * time.Second):
			// Unblock the reader so that no goroutine outlives the test.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			w.Close()
			<-done
			t.Fatal("ReadResults blocked on a FIFO")
		}
	})
	t.Run("other-format", func(t *testing.T) {
		// WriteResult writes this harness's format whatever r.Format says;
		// a file of another format is refused, naming it.
		r := passResult("a")
		r.Format = "codegenie-gate-result/3"
		p, err := harness.WriteResult(t.TempDir(), r)
		require.NoError(t, err)
		got, err := harness.ReadResult(p)
		require.NoError(t, err)
		require.Equal(t, "codegenie-gate-result/2", got.Format)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte("gate-result/2"), []byte("gate-result/3"), 1), 0o644))
		_, err = harness.ReadResult(p)
		require.ErrorIs(t, err, harness.ErrBadResult)
		require.ErrorContains(t, err, `format "codegenie-gate-result/3"`)
	})
	t.Run("object-bomb", func(t *testing.T) {
		// 3 bytes of JSON per class, each decoded into a Class struct.
		p := filepath.Join(t.TempDir(), "a.json")
		bomb := `{"format":"codegenie-gate-result/2","scenario":"a","verdict":"PASS","classes":[` + strings.Repeat("{},", 1<<20) + `{}]}`
		require.NoError(t, os.WriteFile(p, []byte(bomb), 0o644))
		_, err := harness.ReadResult(p)
		require.ErrorIs(t, err, harness.ErrBadResult)
		require.ErrorContains(t, err, "JSON objects")
	})
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		p, err := harness.WriteResult(t.TempDir(), passResult("a"))
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(dir, "a.json")))
		_, err = harness.ReadResults(dir)
		require.ErrorIs(t, err, harness.ErrBadResult)
		require.ErrorContains(t, err, "not a regular file")
	})
}

// TestMergeRetriedShard: a retried shard whose result differs only in
// wall time is the same result; the faster one is kept, whatever the
// order of the inputs.
func TestMergeRetriedShard(t *testing.T) {
	a, b := passResult("a"), passResult("a")
	a.Wall, b.Wall = 3*time.Second, 2*time.Second
	for _, in := range [][]harness.Result{{a, b}, {b, a}} {
		merged, err := harness.MergeResults(in)
		require.NoError(t, err)
		require.Equal(t, []harness.Result{b}, merged)
	}
}
