package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/ledger"
)

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata (review the diff, then commit it)")

// downloaded writes, under base, the folders of three shards as a CI
// download holds them: gate-0 ran flaky (nondeterministic; its text
// holds an escape and a Markdown fence), gate-1 steady (a pass), and
// gate-crash a gate whose process died, with its crash output.
func downloaded(t *testing.T, base string) {
	t.Helper()
	flaky := result("flaky", "0/2", gate.Nondeterministic)
	flaky.Test, flaky.Package = "TestGate/flaky", "pkg"
	flaky.Classes = []gate.Class{{Runs: 30}, {Runs: 20, FirstRun: 3}}
	flaky.Explanation = "NONDETERMINISTIC flaky: 50 runs in 2 classes (30, 20)\n" +
		"output bytes differ at offset 4\n  run 0: \"abc\x1b[2Jd\"\n  run 3: ```fenced```\n\n" +
		"only child processes differed; run 3 (class 2) was made again in fresh processes:\n" +
		"  the outcome depends on: TZ"
	bundle := filepath.Join(base, "gate-0", "evidence", "k", "gate-000001", "flaky", "flaky.bundle.zst")
	flaky.Evidence = bundle
	flaky.Commands = []gate.Command{
		{Purpose: "compare", Argv: []string{"go", "run", "github.com/codegenie/codegenie/cmd/bundle", "diff", bundle, "-runs", "run-000,run-003"}},
		{Purpose: "reproduce", Argv: []string{"go", "test", "./pkg", "-run", "^TestGate$/^flaky$", "-count=1"}},
	}
	steady := result("steady", "1/2", gate.Pass)
	crasher := result("crasher", "", gate.Pass)
	crasher.Verdict, crasher.Runs, crasher.Classes = "CRASHED", 3, nil
	crasher.Test, crasher.Package = "TestCrash", "."
	crasher.InProgress = "run 3 of 50 (3 runs had ended)"
	crasher.Failure = "the test process died during " + crasher.InProgress + ", before the gate gave a verdict"
	crasher.Explanation = "CRASHED crasher: " + crasher.Failure + "."
	crasher.CrashOutput = filepath.Join(base, "gate-crash", "crasher.crash.txt")
	crasher.Commands = []gate.Command{{Purpose: "reproduce", Argv: []string{"go", "test", ".", "-run", "^TestCrash$", "-count=1"}}}
	for dir, rs := range map[string][]gate.Result{
		"gate-0":     {flaky, result("steady", "0/2", gate.Skipped)},
		"gate-1":     {steady, result("flaky", "1/2", gate.Skipped)},
		"gate-crash": {crasher},
	} {
		for _, r := range rs {
			_, err := r.Save(filepath.Join(base, dir))
			require.NoError(t, err)
		}
	}
	require.NoError(t, os.WriteFile(crasher.CrashOutput, []byte("panic: stray goroutine panics\n\ngoroutine 7 [running]:\nexample.com/m.TestCrash.func1.1()\n"), 0o644))
}

// TestExplainGolden: what gate-merge prints, and its Markdown job
// summary, for a download of three shards: the summary, then each
// scenario that did not pass with its first screen, evidence and
// commands, paths relative to where gate-merge ran; control bytes are
// escaped and no text closes a Markdown fence.
func TestExplainGolden(t *testing.T) {
	base := t.TempDir()
	downloaded(t, base)
	t.Chdir(base)
	md := filepath.Join(t.TempDir(), "summary.md")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-markdown", md, "gate-0", "gate-1", "gate-crash"}, noEnv, &stdout, &stderr)
	require.Equal(t, 1, exitCode(err, &stderr))
	mdText, err := os.ReadFile(md)
	require.NoError(t, err)
	require.NotContains(t, stdout.String()+string(mdText), "\x1b")
	for name, got := range map[string][]byte{"merge.txt": stdout.Bytes(), "merge.md": mdText, "merge.stderr": stderr.Bytes()} {
		golden := filepath.Join(testdataDir(t), name)
		if *update {
			require.NoError(t, atomicfile.WriteFile(golden, got, 0o644))
			continue
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "run go test -update to write it")
		require.Equal(t, string(want), string(got), "%s (go test -update rewrites it)", golden)
	}
}

// testdataDir is this package's testdata directory, found from the test
// binary's starting directory (a test may t.Chdir away from it).
var startDir, _ = os.Getwd()

func testdataDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(startDir, "testdata")
}

// TestMergeFailureStillExplains: when the merge fails (a scenario is
// missing: its shard's process crashed first), gate-merge prints no
// summary that could say PASS, explains the crash, and names it as why
// the scenario is missing.
func TestMergeFailureStillExplains(t *testing.T) {
	base := t.TempDir()
	crasher := result("crasher", "1/2", gate.Pass)
	crasher.Verdict, crasher.Runs, crasher.Classes = "CRASHED", 3, nil
	crasher.InProgress = "run 3 of 50 (3 runs had ended)"
	// b belongs to shard 1/2, which crashed before it; shard 0 skipped it.
	s0 := []gate.Result{result("a", "0/2", gate.Pass), result("b", "0/2", gate.Skipped)}
	for dir, rs := range map[string][]gate.Result{"gate-0": s0, "gate-1": {crasher}} {
		for _, r := range rs {
			_, err := r.Save(filepath.Join(base, dir))
			require.NoError(t, err)
		}
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{filepath.Join(base, "gate-0"), filepath.Join(base, "gate-1")}, noEnv, &stdout, &stderr)
	require.Equal(t, 1, exitCode(err, &stderr))
	require.NotContains(t, stdout.String(), "determinism gate: PASS")
	require.Contains(t, stdout.String(), "--- CRASHED crasher")
	require.Contains(t, stderr.String(), "scenario missing from the merged results: b")
	require.Contains(t, stderr.String(), "no result from shard 1/2; its test process crashed during scenario crasher, run 3 of 50 (3 runs had ended), before it came to this one")
}

// TestLedger: -ledger appends each merged verdict, with the test, the
// package directory, the evidence as the merge found it and the CI job;
// skipped and crashed scenarios have no verdict and are not appended.
func TestLedger(t *testing.T) {
	base := t.TempDir()
	downloaded(t, base)
	t.Chdir(base)
	dsn := filepath.Join(t.TempDir(), "ledger.jsonl")
	env := map[string]string{"GITHUB_RUN_ID": "77", "GITHUB_REPOSITORY": "o/r", "GITHUB_JOB": "merge", "GITHUB_SHA": "abc123"}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-ledger", dsn, "gate-0", "gate-1", "gate-crash"}, func(k string) string { return env[k] }, &stdout, &stderr)
	require.Equal(t, 1, exitCode(err, &stderr), "the gate failed: %s", stderr.String())
	st, err := ledger.Open(t.Context(), dsn)
	require.NoError(t, err)
	defer st.Close()
	var got []ledger.Entry
	require.NoError(t, st.Entries(t.Context(), 1, 0, func(e ledger.Entry) error {
		got = append(got, e)
		return nil
	}))
	require.Len(t, got, 2, "flaky and steady; not the crash")
	byName := map[string]ledger.Entry{}
	for _, e := range got {
		byName[e.Scenario] = e
		require.Equal(t, "abc123", e.Revision)
		require.Equal(t, "github:o/r/77/merge", e.CIJob)
	}
	require.Equal(t, gate.Nondeterministic, byName["flaky"].Verdict)
	require.Equal(t, "TestGate/flaky", byName["flaky"].Test)
	require.Equal(t, "pkg", byName["flaky"].Package)
	bundle := filepath.Join("gate-0", "evidence", "k", "gate-000001", "flaky", "flaky.bundle.zst")
	require.Equal(t, bundle, byName["flaky"].Evidence)
	require.Equal(t, gate.Pass, byName["steady"].Verdict)
	// The entry is the result's outcome: what a result file holds reaches
	// the ledger, with its paths as the merge found them.
	flaky := byName["flaky"]
	require.Equal(t, []gate.Class{{Runs: 30}, {Runs: 20, FirstRun: 3}}, flaky.Classes)
	require.Contains(t, flaky.Explanation, "the outcome depends on: TZ")
	require.Equal(t, "nondeterministic", flaky.Failure)
	require.Equal(t, "example.com/m", flaky.ImportPath)
	require.Len(t, flaky.Commands, 2)
	require.Equal(t, bundle, flaky.Commands[0].Argv[4], "the compare command names the bundle the entry names")
	require.Equal(t, 2, flaky.Schema)
}
