package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// result is a result of scenario in shard ("" unsharded).
func result(scenario, shard string, v gate.Verdict) gate.Result {
	r := gate.Result{
		Outcome: gate.Outcome{Scenario: scenario, Test: "TestGate/" + scenario, ImportPath: "example.com/m", Verdict: v, Iterations: 50, Runs: 50, Floor: 20, Classes: []gate.Class{{Runs: 50}}},
		Shard:   shard,
	}
	switch v {
	case gate.Skipped:
		r.Runs, r.Classes = 0, nil
	case gate.Nondeterministic:
		r.Classes = []gate.Class{{Runs: 30}, {Runs: 20}}
		r.Failure = "nondeterministic"
	}
	return r
}

// shardDirs writes each shard's results into its own directory.
func shardDirs(t *testing.T, shards ...[]gate.Result) []string {
	var dirs []string
	for _, rs := range shards {
		dir := t.TempDir()
		for _, r := range rs {
			_, err := r.Save(dir)
			require.NoError(t, err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func TestRun(t *testing.T) {
	// a belongs to shard 0 of 2 and b to shard 1 (FNV-1a of the name
	// modulo 2; harness's shard test holds the assignment).
	s0 := []gate.Result{result("a", "0/2", gate.Pass), result("b", "0/2", gate.Skipped)}
	s1 := []gate.Result{result("a", "1/2", gate.Skipped), result("b", "1/2", gate.Pass)}
	bad := []gate.Result{result("a", "1/2", gate.Skipped), result("b", "1/2", gate.Nondeterministic)}

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
			err := run(context.Background(), tt.args(t), noEnv, &stdout, &stderr)
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
	s0 := []gate.Result{result("a", "0/2", gate.Pass), result("b", "0/2", gate.Skipped)}
	s1 := []gate.Result{result("a", "1/2", gate.Skipped), result("b", "1/2", gate.Pass)}
	out := filepath.Join(t.TempDir(), "merged")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), append([]string{"-out", out}, shardDirs(t, s0, s1)...), noEnv, &stdout, &stderr))
	rs, err := gate.ReadResults(out)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, 2)
}

// TestVerdictDecides: results that did not pass fail the merged gate,
// each named with the field, even when they carry no failure text; a
// retried shard that differs only in wall time is no conflict.
func TestVerdictDecides(t *testing.T) {
	edit := func(v gate.Verdict, f func(r *gate.Result)) []gate.Result {
		r := result("a", "", gate.Pass)
		r.Verdict = v
		f(&r)
		return []gate.Result{r}
	}
	same := func(r *gate.Result) {}
	tests := []struct {
		name   string
		shards [][]gate.Result
		code   int
		stderr string
	}{
		{"nondeterministic", [][]gate.Result{edit(gate.Nondeterministic, same)}, 1, "verdict is NONDETERMINISTIC, want PASS"},
		{"broken", [][]gate.Result{edit(gate.Broken, same)}, 1, "verdict is BROKEN, want PASS"},
		{"unknown", [][]gate.Result{edit("GREEN", same)}, 1, "verdict is GREEN, want PASS"},
		{"zero-runs", [][]gate.Result{edit(gate.Pass, func(r *gate.Result) { r.Runs, r.Classes = 0, []gate.Class{{Runs: 0}} })}, 1, "runs is 0"},
		{"below-floor", [][]gate.Result{edit(gate.Pass, func(r *gate.Result) { r.Runs, r.Classes = 3, []gate.Class{{Runs: 3}} })}, 1, "runs is 3, below the floor of 20"},
		{"negative", [][]gate.Result{edit(gate.Pass, func(r *gate.Result) { r.Runs = -1 })}, 1, "runs is -1"},
		{"shard-7/2", [][]gate.Result{edit(gate.Pass, func(r *gate.Result) { r.Shard = "7/2" })}, 1, "shard is 7/2"},
		{"shard-0/0", [][]gate.Result{edit(gate.Pass, func(r *gate.Result) { r.Shard = "0/0" })}, 1, "shard is 0/0"},
		{"escape", [][]gate.Result{edit(gate.Nondeterministic, func(r *gate.Result) { r.Scenario = "a\x1b[31m" })}, 1, `scenario "a\x1b[31m"`},
		{"retried-wall", [][]gate.Result{
			edit(gate.Pass, func(r *gate.Result) { r.Wall = time.Second }),
			edit(gate.Pass, func(r *gate.Result) { r.Wall = 2 * time.Second }),
		}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), shardDirs(t, tt.shards...), noEnv, &stdout, &stderr)
			code := exitCode(err, &stderr)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Contains(t, stderr.String(), tt.stderr)
			require.NotContains(t, stdout.String()+stderr.String(), "\x1b", "no raw escape reaches the terminal")
			if code != 0 {
				require.NotContains(t, stdout.String(), "gate: PASS")
			}
		})
	}
}

// TestFIFO: a FIFO named *.json is refused, not opened (opening it would
// block until a writer came).
func TestFIFO(t *testing.T) {
	dir := shardDirs(t, []gate.Result{result("a", "", gate.Pass)})[0]
	fifo := filepath.Join(dir, "fifo.json")
	if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
		t.Skipf("no mkfifo here: %v %s", err, out)
	}
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		err := run(context.Background(), []string{dir}, noEnv, io.Discard, &stderr)
		done <- exitCode(err, &stderr)
	}()
	select {
	case code := <-done:
		require.Equal(t, 1, code)
		require.Contains(t, stderr.String(), "fifo.json is not a regular file")
	case <-time.After(10 * time.Second):
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // unblock the reader
		require.NoError(t, err)
		w.Close()
		<-done
		t.Fatal("gate-merge blocked on a FIFO")
	}
}

// TestHelp: -h prints the usage and every flag with its description on
// stdout, exit status 0.
func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-h"}, noEnv, &stdout, &stderr)
	require.Equal(t, 0, exitCode(err, &stderr))
	require.Empty(t, stderr.String())
	require.Contains(t, stdout.String(), "usage: gate-merge [-markdown FILE] [-ledger DSN] [-out DIR] DIR...\n")
	require.Contains(t, stdout.String(), "  -markdown FILE\n")
	require.Contains(t, stdout.String(), "  -ledger DSN\n")
	require.Contains(t, stdout.String(), "  -out DIR\n    \talso write the merged result files to DIR, one file per scenario\n")
}

// noEnv is an environment with nothing set.
func noEnv(string) string { return "" }
