package harness

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
)

// TestCrashWatch: while a gate runs under -gate.results, the results
// folder holds a CRASHED result naming the run in progress (a run made
// again said so) and the crash output file, relative to the folder, a
// file ReadResults reads at every step; when
// the gate ends the crash output file is gone and the process's fatal
// error report no longer goes there.
func TestCrashWatch(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	rep := &Report{Outcome: gate.Outcome{Scenario: "s", Test: "TestX/sub", Package: "harness", ImportPath: "example.com/m/harness", Iterations: 5, Floor: 3}, Dir: wd, Shard: "1/2"}
	w := newCrashWatch(dir, rep)
	var seen []gate.Result
	run := w.wrap(func(ctx context.Context, iter, procs int) outcome {
		rs, err := gate.ReadResults(dir)
		require.NoError(t, err)
		require.Len(t, rs, 1)
		seen = append(seen, rs[0])
		require.FileExists(t, filepath.Join(dir, filepath.FromSlash(rs[0].CrashOutput)))
		rep.Runs++
		return outcome{iter: iter}
	})
	// Run 3 after run 1 made again writes a shorter result over a longer
	// one.
	for _, i := range []int{0, 1, 2, 1, 3} {
		run(t.Context(), i, 1)
	}
	require.Len(t, seen, 5)
	for i, in := range []string{
		"run 0 of 5 (0 runs had ended)",
		"run 1 of 5 (1 runs had ended)",
		"run 2 of 5 (2 runs had ended)",
		"run 1, made again after the runs (3 runs had ended)",
		"run 3 of 5 (4 runs had ended)",
	} {
		r := seen[i]
		require.Equal(t, gate.Crashed, r.Verdict)
		require.Equal(t, in, r.InProgress)
		require.Equal(t, "harness", r.Package)
		require.Equal(t, "1/2", r.Shard)
		require.Regexp(t, `^s-[0-9a-f]{16}\.crash\.txt$`, r.CrashOutput, "relative to the results folder")
		require.Contains(t, r.Explanation, "CRASHED s: the test process died during "+in)
		require.Equal(t, []gate.Command{{Purpose: hint.PurposeReproduce, Argv: []string{"go", "test", "./harness", "-run", "^TestX$/^sub$", "-count=1"}}}, r.Commands)
		require.Error(t, r.Err())
	}
	crashFile := filepath.Join(dir, seen[0].CrashOutput)
	require.NoError(t, w.end())
	require.NoFileExists(t, crashFile, "a gate that ended removes its crash output file")
	crashOutput.Lock()
	require.Nil(t, crashOutput.owner)
	crashOutput.Unlock()
}

// TestCrashWatchOverlap: a gate that starts while the last one finishes
// keeps the crash output: the last one's end leaves it alone.
func TestCrashWatchOverlap(t *testing.T) {
	dir := t.TempDir()
	a := newCrashWatch(dir, &Report{Outcome: gate.Outcome{Scenario: "a", Test: "TestA", Iterations: 2}})
	b := newCrashWatch(dir, &Report{Outcome: gate.Outcome{Scenario: "b", Test: "TestB", Iterations: 2}})
	noop := func(ctx context.Context, iter, procs int) outcome { return outcome{iter: iter} }
	a.wrap(noop)(t.Context(), 0, 1)
	b.wrap(noop)(t.Context(), 0, 1)
	require.NoError(t, a.end())
	crashOutput.Lock()
	require.Same(t, b, crashOutput.owner, "b's gate still sends the crash output to its file")
	crashOutput.Unlock()
	require.FileExists(t, b.res.CrashOutput)
	require.NoError(t, b.end())
	require.NoFileExists(t, b.res.CrashOutput)
}

// BenchmarkCrashWatchRun measures what the crash watch adds to a run:
// rewriting the in-progress result (a write and a rename, no fsync).
func BenchmarkCrashWatchRun(b *testing.B) {
	dir := b.TempDir()
	rep := &Report{Outcome: gate.Outcome{Scenario: "s", Test: "TestX", ImportPath: "example.com/m", Iterations: b.N + 1, Floor: 1}}
	w := newCrashWatch(dir, rep)
	run := w.wrap(func(ctx context.Context, iter, procs int) outcome { return outcome{iter: iter} })
	run(b.Context(), 0, 1)
	b.ResetTimer()
	for i := range b.N {
		run(b.Context(), i+1, 1)
	}
	b.StopTimer()
	require.NoError(b, w.end())
}
