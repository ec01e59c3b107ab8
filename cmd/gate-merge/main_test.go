package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
)

// result is a result of scenario in shard ("" unsharded).
func result(scenario, shard string, v harness.Verdict) harness.Result {
	r := harness.Result{Format: harness.ResultFormat, Scenario: scenario, Test: "TestGate/" + scenario, Package: "example.com/m",
		Shard: shard, Verdict: v, Iterations: 50, Runs: 50, Classes: []harness.Class{{Size: 50}}}
	switch v {
	case harness.Skipped:
		r.Runs, r.Classes = 0, nil
	case harness.Nondeterministic:
		r.Classes = []harness.Class{{Size: 30}, {Size: 20}}
		r.Failure = "nondeterministic"
	}
	return r
}

// shardDirs writes each shard's results into its own directory.
func shardDirs(t *testing.T, shards ...[]harness.Result) []string {
	var dirs []string
	for _, rs := range shards {
		dir := t.TempDir()
		for _, r := range rs {
			_, err := harness.WriteResult(dir, r)
			require.NoError(t, err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func TestRun(t *testing.T) {
	// a belongs to shard 0 of 2 and b to shard 1 (harness.ShardOf).
	require.Equal(t, 0, harness.ShardOf("a", 2))
	require.Equal(t, 1, harness.ShardOf("b", 2))
	s0 := []harness.Result{result("a", "0/2", harness.Pass), result("b", "0/2", harness.Skipped)}
	s1 := []harness.Result{result("a", "1/2", harness.Skipped), result("b", "1/2", harness.Pass)}
	bad := []harness.Result{result("a", "1/2", harness.Skipped), result("b", "1/2", harness.Nondeterministic)}

	tests := []struct {
		name   string
		args   func(t *testing.T) []string
		code   int
		stdout string
		stderr string
	}{
		{"pass", func(t *testing.T) []string { return shardDirs(t, s0, s1) }, 0, "== determinism gate: PASS ==", ""},
		{"fail", func(t *testing.T) []string { return shardDirs(t, s0, bad) }, 1, "NONDETERMINISTIC", "the gate did not pass"},
		{"missing-shard", func(t *testing.T) []string { return shardDirs(t, s0) }, 1, "", "scenario missing from the merged results: b"},
		{"conflict", func(t *testing.T) []string { return shardDirs(t, s0, s1, bad) }, 1, "", "conflicting results"},
		{"no-results", func(t *testing.T) []string { return []string{t.TempDir()} }, 1, "", "no result files"},
		{"no-args", func(t *testing.T) []string { return nil }, 2, "", "usage: gate-merge"},
		{"bad-flag", func(t *testing.T) []string { return []string{"-nope"} }, 2, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args(t), strings.NewReader(""), &stdout, &stderr)
			code := exitCode(err, &stderr)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), tt.stdout)
			require.Contains(t, stderr.String(), tt.stderr)
			if tt.stderr != "" && code != 0 {
				require.True(t, strings.HasPrefix(stderr.String(), "gate-merge: ") || strings.Contains(stderr.String(), "usage"), stderr.String())
			}
		})
	}
}

// TestOut: -out writes the merged results, which read back as the
// unsharded gate's.
func TestOut(t *testing.T) {
	s0 := []harness.Result{result("a", "0/2", harness.Pass), result("b", "0/2", harness.Skipped)}
	s1 := []harness.Result{result("a", "1/2", harness.Skipped), result("b", "1/2", harness.Pass)}
	out := filepath.Join(t.TempDir(), "merged")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), append([]string{"-out", out}, shardDirs(t, s0, s1)...), nil, &stdout, &stderr))
	rs, err := harness.ReadResults(out)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, 2)
}
