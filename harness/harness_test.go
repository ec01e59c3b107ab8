package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/hint"
)

// linear returns a scenario whose run i emits a job.started and a
// step.scored event; band(i) decides the band and out(i) the output.
func linear(band func(i int) string, out func(i int) string) harness.Scenario {
	var n atomic.Int64
	return func(ctx context.Context, run *harness.Run) ([]byte, error) {
		r := events.NewRecorder(events.Config{
			Clock: func() time.Time { return time.Unix(n.Add(1), 0) },
			NewID: func() string { return fmt.Sprint("id-", n.Add(1)) },
		})
		if _, err := r.Emit("job.started", map[string]any{"scenario": "npm"}); err != nil {
			return nil, err
		}
		if _, err := r.Emit("step.scored", map[string]any{"band": band(run.Index()), "score": 0.8}); err != nil {
			return nil, err
		}
		run.SetEvents(r.Events())
		run.Pin("model", "m-1")
		return []byte(out(run.Index())), nil
	}
}

func constant(s string) func(int) string { return func(int) string { return s } }

func TestCheckPasses(t *testing.T) {
	t.Parallel()
	rep := harness.Check(t, "npm", linear(constant("accept"), constant("diff")))
	require.True(t, rep.OK())
	require.Equal(t, gate.Pass, rep.Verdict)
	require.Equal(t, 50, rep.Runs)
	require.Equal(t, harness.DefaultProcesses, rep.ProcessRuns)
	require.Len(t, rep.Classes, 1)
	require.Equal(t, 50, rep.Classes[0].Runs)
	require.Equal(t, 46, rep.Classes[0].InProcess)
	require.Len(t, rep.ClassProcesses(0), 4)
	require.Contains(t, rep.Isolation, "synctest bubble per run")
	require.Equal(t, []int{1, 2, 3}, rep.GOMAXPROCS[:3])
	require.Equal(t, events.Sum([]byte("diff")).String(), rep.OutputDigest)
	require.Equal(t, map[string]string{"model": "m-1"}, rep.Components)
	require.Equal(t, harness.Key(rep.Components), rep.Key)
	require.Equal(t, "TestCheckPasses", rep.Test)
	require.Equal(t, "github.com/codegenie/codegenie/harness", rep.ImportPath)
	require.Equal(t, "harness", rep.Package)
	require.Empty(t, rep.EvidenceFiles, "a pass writes no evidence")
	require.Empty(t, rep.Evidence)
}

func TestIterateDivergence(t *testing.T) {
	dir := t.TempDir()
	odd := func(i int) bool { return i >= 3 && i%2 == 1 }
	s := linear(func(i int) string {
		if odd(i) {
			return "borderline"
		}
		return "accept"
	}, func(i int) string {
		if odd(i) {
			return "diff b"
		}
		return "diff a"
	})
	rep, err := harness.Config{Iterations: 30, ArtifactDir: dir, ReproCommand: "go test -run X"}.Iterate(t.Context(), "npm/lodash", s)
	require.ErrorIs(t, err, harness.ErrNondeterministic)
	require.NotErrorIs(t, err, harness.ErrBelowFloor)
	require.Equal(t, 30, rep.Runs, "runs continue after a divergence")
	require.Equal(t, gate.Nondeterministic, rep.Verdict)
	require.Len(t, rep.Classes, 2)
	require.Equal(t, []int{16, 14}, []int{rep.Classes[0].Runs, rep.Classes[1].Runs})
	d := rep.Divergence
	require.Equal(t, 0, d.RunA)
	require.Equal(t, 3, d.RunB)
	require.NotNil(t, d.Output)
	require.Equal(t, 5, d.Output.Offset)
	require.Equal(t, "diff a", d.Output.ExcerptA)
	require.Equal(t, 1, d.Event.Index)
	require.Equal(t, events.Kind("step.scored"), d.Event.Kind)
	require.Equal(t, []string{`["band"]: "accept" != "borderline"`}, d.Event.PayloadDiff)
	require.False(t, d.RequestVaries, "no request was made")

	text := rep.String()
	for _, want := range []string{"NONDETERMINISTIC", "16+14", "class 1 (run 0) against class 2 (run 3)", "offset 5", `"accept" != "borderline"`, "causal chain", "reproduce: cd " + hint.ModuleRoot() + " && go test -run X", "EmittedAt:"} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "re-record")

	// One bundle holding the kept run of each class, plus the report as
	// text and JSON.
	var bundles []string
	for _, e := range rep.EvidenceFiles {
		require.FileExists(t, e.Path)
		require.True(t, strings.HasPrefix(e.Path, dir), e.Path)
		if e.What == "bundle" {
			bundles = append(bundles, e.Path)
		}
	}
	require.Len(t, bundles, 1)
	require.Equal(t, bundles[0], rep.Evidence, "the outcome names the bundle")
	b, err := bundle.Config{}.Load(t.Context(), bundles[0])
	require.NoError(t, err)
	require.Len(t, b.Runs, 2)
	require.Equal(t, "diff b", string(b.Run("run-003").Output), "the bundle holds each run's output")
	rd, err := bundle.Config{}.Diff(t.Context(), bundle.RunRef{Path: bundles[0], Run: "run-000"}, bundle.RunRef{Path: bundles[0], Run: "run-003"})
	require.NoError(t, err)
	require.Equal(t, d.Event, rd.Divergence, "the bundle's diff agrees with the gate")
	require.NotNil(t, rd.Output, "and finds the output difference")
	require.Equal(t, "cd "+hint.ModuleRoot()+" && "+hint.Tool("bundle", "diff", bundles[0], "-runs", "run-000,run-003"), d.CompareCommand)

	js, err := json.Marshal(rep)
	require.NoError(t, err)
	var back harness.Report
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, rep.Classes, back.Classes)
}

func TestPinsSplitClasses(t *testing.T) {
	rep, err := harness.Config{Iterations: 20}.Iterate(t.Context(), "pins", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		run.Pin("cassette_id", fmt.Sprint("c-", run.Index()%2))
		return []byte("same"), nil
	})
	require.ErrorIs(t, err, harness.ErrNondeterministic)
	require.Len(t, rep.Classes, 2)
	require.Equal(t, []string{`cassette_id: "c-0" != "c-1"`}, rep.Divergence.PinDiff)

	rep, err = harness.Config{Iterations: 20}.Iterate(t.Context(), "pin-conflict", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		run.Pin("model", "a")
		run.Pin("model", "b")
		return nil, nil
	})
	require.ErrorIs(t, err, harness.ErrBroken)
	require.Equal(t, harness.ErrorKindPin, rep.Classes[0].ErrorKind)
}

func TestKey(t *testing.T) {
	t.Parallel()
	require.Empty(t, harness.Key(nil))
	k := harness.Key(map[string]string{"b": "2", "a": "1"})
	require.Equal(t, events.Sum([]byte(`{"a":"1","b":"2"}`)).String(), k)
}

func TestAllowlistIsHonoured(t *testing.T) {
	s := linear(constant("accept"), constant("x"))
	rep, err := harness.Config{Allowlist: []harness.AllowEntry{}}.Iterate(t.Context(), "strict", s)
	require.ErrorIs(t, err, harness.ErrNondeterministic, "with an empty allowlist the clock and IDs are compared")
	require.Equal(t, "EmittedAt", rep.Divergence.Event.Field)
	require.Contains(t, rep.String(), "(none: every field is compared)")

	_, err = harness.Config{Allowlist: []harness.AllowEntry{
		{Field: "EmittedAt", Reason: "clock"}, {Field: "AuditEventID", Reason: "ids"},
	}}.Iterate(t.Context(), "no-budget-token", s)
	require.NoError(t, err, "the scenario sets no budget token")
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  harness.Config
		want string
	}{
		{"unknown-field", harness.Config{Allowlist: []harness.AllowEntry{{Field: "Payload", Reason: "no"}}}, `"Payload" is not a strippable Event field`},
		{"no-reason", harness.Config{Allowlist: []harness.AllowEntry{{Field: "EmittedAt"}}}, "has no Reason"},
		{"repeat", harness.Config{Allowlist: []harness.AllowEntry{{Field: "EmittedAt", Reason: "a"}, {Field: "EmittedAt", Reason: "b"}}}, "repeats EmittedAt"},
		{"below-floor", harness.Config{Iterations: 10}, "below Floor (20)"},
		{"negative", harness.Config{Iterations: -1}, "Iterations is -1"},
		{"floor", harness.Config{Floor: -2}, "Floor is -2"},
		{"budget", harness.Config{Budget: -time.Second}, "Budget is -1s"},
		{"child-timeout", harness.Config{ChildTimeout: -time.Second}, "ChildTimeout is -1s"},
		{"procs", harness.Config{Procs: []int{1, 0}}, "Procs[1] is 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := tt.cfg.Iterate(t.Context(), "x", linear(constant("a"), constant("b")))
			require.Nil(t, rep)
			require.ErrorIs(t, err, harness.ErrInvalidConfig)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// stepClock returns a clock that advances by step on every reading.
func stepClock(step time.Duration) func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.Unix(0, 0).Add(time.Duration(n.Add(1)) * step) }
}

func TestBudget(t *testing.T) {
	s := linear(constant("accept"), constant("x"))
	t.Run("exceeded-above-floor", func(t *testing.T) {
		// Every clock reading is 1s later: after run k (0-based) the budget
		// check sees k+1 seconds elapsed.
		rep, err := harness.Config{Budget: 25 * time.Second, Now: stepClock(time.Second)}.Iterate(t.Context(), "slow", s)
		require.NoError(t, err, "above the floor an exceeded budget is loud, not a failure")
		require.True(t, rep.BudgetExceeded)
		require.Equal(t, 26, rep.Runs)
		require.Contains(t, rep.String(), "!!! TIME BUDGET EXCEEDED: 26 of 50 iterations ran")
		require.Contains(t, rep.Summary(), "BUDGET EXCEEDED")
	})
	t.Run("below-floor", func(t *testing.T) {
		rep, err := harness.Config{Budget: 5 * time.Second, Now: stepClock(time.Second)}.Iterate(t.Context(), "slower", s)
		require.ErrorIs(t, err, harness.ErrBelowFloor)
		require.Equal(t, 6, rep.Runs)
		require.Contains(t, err.Error(), "made 6 runs, floor is 20: the time budget ran out")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var n int
		rep, err := harness.Config{}.Iterate(ctx, "cancelled", func(ctx context.Context, run *harness.Run) ([]byte, error) {
			if n++; n == 5 {
				cancel()
			}
			return s(ctx, run)
		})
		require.ErrorIs(t, err, harness.ErrBelowFloor)
		require.Equal(t, 5, rep.Runs)
		require.Contains(t, err.Error(), "context was cancelled")
	})
}

func TestRunErrors(t *testing.T) {
	t.Run("some-runs-fail", func(t *testing.T) {
		boom := errors.New("boom")
		rep, err := harness.Config{}.Iterate(t.Context(), "err", func(ctx context.Context, run *harness.Run) ([]byte, error) {
			if run.Index()%10 == 4 {
				return nil, boom
			}
			return linear(constant("a"), constant("b"))(ctx, run)
		})
		require.ErrorIs(t, err, harness.ErrNondeterministic, "a mix of passes and failures is nondeterministic")
		require.ErrorIs(t, err, harness.ErrRunFailed)
		require.Equal(t, 50, rep.Runs)
		require.Equal(t, 5, rep.Classes[1].Runs)
		require.Equal(t, 4, rep.Classes[1].FirstRun)
		require.Equal(t, "error (*errors.errorString)", rep.Classes[1].ErrorKind)
	})
	t.Run("panic-every-run", func(t *testing.T) {
		rep, err := harness.Config{}.Iterate(t.Context(), "panic", func(context.Context, *harness.Run) ([]byte, error) { panic("nil map") })
		require.ErrorIs(t, err, harness.ErrBroken, "every run fails the same way")
		require.Equal(t, harness.ErrorKindPanic, rep.Classes[0].ErrorKind)
		require.Contains(t, rep.Classes[0].Message, "panic: nil map")
		require.Empty(t, rep.ReRecordCommand)
	})
}

func TestGOMAXPROCSVariedAndRestored(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	var seen []int
	rep := harness.Config{Iterations: 20, Procs: []int{1, 3, 2}, Processes: -1}.Check(t, "procs", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		seen = append(seen, runtime.GOMAXPROCS(0))
		return []byte("x"), nil
	})
	require.Equal(t, before, runtime.GOMAXPROCS(0))
	require.Equal(t, []int{1, 3, 2, 1, 3}, seen[:5])
	require.Equal(t, []int{1, 2, 3}, rep.GOMAXPROCS)
}

func TestFreshContextPerRun(t *testing.T) {
	t.Parallel()
	var ctxs []context.Context
	harness.Config{Iterations: 20, Processes: -1}.Check(t, "ctx", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		require.NoError(t, ctx.Err())
		ctxs = append(ctxs, ctx)
		return nil, nil
	})
	for _, c := range ctxs {
		require.ErrorIs(t, c.Err(), context.Canceled, "each run's context is cancelled at its end")
	}
}

func TestBubbleClockDiffersPerRun(t *testing.T) {
	t.Parallel()
	var times []time.Time
	harness.Config{Iterations: 20, Processes: -1}.Check(t, "clock", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		times = append(times, time.Now())
		return nil, nil
	})
	for i := 1; i < len(times); i++ {
		require.True(t, times[i].After(times[i-1]), "run %d reads %v, run %d reads %v", i-1, times[i-1], i, times[i])
	}
}

func TestIterateReportsLeakedGoroutine(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	rep, err := harness.Config{Iterations: 20}.Iterate(t.Context(), "leak", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		if run.Index() == 2 {
			go leakyWorker(release)
		}
		return nil, nil
	})
	require.ErrorIs(t, err, harness.ErrLeak)
	require.ErrorIs(t, err, harness.ErrNondeterministic)
	require.Len(t, rep.Leaks, 1)
	require.Equal(t, 2, rep.Leaks[0].Run)
	require.Len(t, rep.Leaks[0].Goroutines, 1)
	require.Contains(t, rep.Leaks[0].Goroutines[0].Stack, "leakyWorker")
	require.Contains(t, rep.String(), "run 2 leaked 1 goroutine(s)")
}

func leakyWorker(release chan struct{}) { <-release }

func TestIterateWaitsForGoroutinesThatExitOnCancel(t *testing.T) {
	_, err := harness.Config{Iterations: 20}.Iterate(t.Context(), "exits", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		go func() { <-ctx.Done() }()
		return nil, nil
	})
	require.NoError(t, err)
}

// TestCheckBubbleFailures runs Check on a leaking and on a deadlocking
// scenario in a child process: a goroutine stuck in a synctest bubble can
// never be released, and must not outlive this test.
func TestCheckBubbleFailures(t *testing.T) {
	t.Parallel()
	if os.Getenv("HARNESS_BUBBLE_CHILD") != "" {
		return
	}
	for _, tc := range []struct{ name, want string }{
		{"leak", "run 3 leaked 1 goroutine(s)"},
		{"deadlock", "every goroutine of the run is blocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBubbleChild$", "-test.v")
			cmd.Env = append(os.Environ(), "HARNESS_BUBBLE_CHILD="+tc.name)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the child test must fail:\n%s", out)
			require.Contains(t, string(out), tc.want)
			require.Contains(t, string(out), "stuckWorker")
			require.Contains(t, string(out), "synctest bubble")
		})
	}
}

func TestBubbleChild(t *testing.T) {
	t.Parallel()
	mode := os.Getenv("HARNESS_BUBBLE_CHILD")
	if mode == "" {
		t.Skip("run by TestCheckBubbleFailures")
	}
	harness.Config{Iterations: 20, Processes: -1}.Check(t, mode, func(ctx context.Context, run *harness.Run) ([]byte, error) {
		if run.Index() == 3 {
			ch := make(chan int)
			go stuckWorker(ch)
			if mode == "deadlock" {
				<-ch
			}
		}
		return nil, nil
	})
}

func stuckWorker(ch chan int) { <-ch }

func TestReproCommand(t *testing.T) {
	t.Parallel()
	t.Run("sub test", func(t *testing.T) {
		cmd := harness.ReproCommand(t)
		require.True(t, strings.HasSuffix(cmd, ` && go test ./harness -run '^TestReproCommand$/^sub_test$' -count=1`), cmd)
		require.True(t, strings.HasPrefix(cmd, "cd /"), "it runs from the module root, wherever that is: %s", cmd)
	})
}
