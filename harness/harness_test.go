package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/replay"
)

// linear returns a scenario whose run i emits a job.started and a
// score.classified event; band(i) decides the band and out(i) the output.
func linear(band func(i int) string, out func(i int) string) harness.Scenario {
	var n atomic.Int64
	return func(ctx context.Context, i int) (harness.Outcome, error) {
		r := events.NewRecorder(events.Options{
			Clock: func() time.Time { return time.Unix(n.Add(1), 0) },
			NewID: func() string { return fmt.Sprint("id-", n.Add(1)) },
		})
		root, err := r.EmitAfter(0, kindStarted, map[string]any{"scenario": "npm"})
		if err != nil {
			return harness.Outcome{}, err
		}
		if _, err := r.EmitAfter(root, kindClassified, map[string]any{"band": band(i), "score": 0.8}); err != nil {
			return harness.Outcome{}, err
		}
		return harness.Outcome{DiffBytes: []byte(out(i)), Events: r.Events()}, nil
	}
}

func constant(s string) func(int) string { return func(int) string { return s } }

func TestCheckPasses(t *testing.T) {
	rep := harness.Check(t, harness.Config{}, "npm", linear(constant("accept"), constant("diff")))
	require.True(t, rep.OK())
	require.Equal(t, 50, rep.Runs)
	require.Equal(t, 1, rep.DistinctOutputs)
	require.Equal(t, 1, rep.DistinctTapes)
	require.Equal(t, "synctest bubble per run", rep.Isolation)
	require.Equal(t, []int{1, 2}[:min(2, len(rep.GOMAXPROCS))], rep.GOMAXPROCS[:min(2, len(rep.GOMAXPROCS))])
	require.Equal(t, events.Sum([]byte("diff")), rep.OutputDigest)
}

func TestIterateDivergence(t *testing.T) {
	dir := t.TempDir()
	s := linear(func(i int) string {
		if i >= 3 && i%2 == 1 {
			return "borderline"
		}
		return "accept"
	}, func(i int) string {
		if i >= 3 && i%2 == 1 {
			return "diff b"
		}
		return "diff a"
	})
	rep, err := harness.Iterate(t.Context(), harness.Config{Iterations: 30, ArtifactDir: dir, ReproCommand: "go test -run X"}, "npm/lodash", s)
	require.ErrorIs(t, err, harness.ErrNondeterministic)
	require.NotErrorIs(t, err, harness.ErrBelowFloor)
	require.Equal(t, 30, rep.Runs, "runs continue after a divergence so distinct outputs are counted")
	d := rep.Divergence
	require.NotNil(t, d)
	require.Equal(t, 3, d.Run)
	require.Equal(t, 2, d.DistinctOutputs)
	require.Equal(t, 2, d.DistinctTapes)
	require.NotNil(t, d.Output)
	require.Equal(t, 5, d.Output.Offset)
	require.Equal(t, "diff a", d.Output.ExcerptA)
	require.NotNil(t, d.Event)
	require.Equal(t, 1, d.Event.Index)
	require.Equal(t, kindClassified, d.Event.Kind)
	require.Equal(t, "Payload", d.Event.Field)
	require.Equal(t, []string{`["band"]: "accept" != "borderline"`}, d.Event.PayloadDiff)
	require.Equal(t, "go test -run X", d.ReproCommand)

	text := rep.String()
	for _, want := range []string{"FAIL", "run 3", "score.classified", "offset 5", `"accept" != "borderline"`, "causal chain", "reproduce: go test -run X", "EmittedAt:"} {
		require.Contains(t, text, want)
	}

	// The evidence: both tapes read back, the output bytes, the JSON.
	var what []string
	for _, e := range d.Evidence {
		require.FileExists(t, e.Path)
		require.True(t, strings.HasPrefix(e.Path, filepath.Join(dir, "npm_lodash")), e.Path)
		what = append(what, fmt.Sprintf("%d %s", e.Run, e.What))
	}
	require.Equal(t, []string{"0 tape", "0 events", "0 output", "0 bundle", "3 tape", "3 events", "3 output", "3 bundle", "-1 divergence", "-1 report"}, what)
	raw, err := os.ReadFile(d.Evidence[4].Path)
	require.NoError(t, err)
	tape3, err := harness.ReadTape(raw)
	require.NoError(t, err)
	require.Len(t, tape3, 2)
	require.Contains(t, string(tape3[1].Payload), "borderline")
	require.NotEmpty(t, tape3[1].AuditEventID, "tapes keep the allowlisted fields")
	out3, err := os.ReadFile(d.Evidence[6].Path)
	require.NoError(t, err)
	require.Equal(t, "diff b", string(out3))

	// The replay bundles verify, and replay's diff engine agrees with the
	// gate on the divergence.
	rd, err := replay.Diff(t.Context(), d.Evidence[3].Path, d.Evidence[7].Path)
	require.NoError(t, err)
	require.Equal(t, d.Event, rd.Divergence)
	require.Contains(t, d.ReplayDiffCommand, "go run github.com/codegenie/codegenie/cmd/replay diff ")
	require.Contains(t, text, "compare the bundles: go run github.com/codegenie/codegenie/cmd/replay diff")

	js, err := os.ReadFile(d.Evidence[8].Path)
	require.NoError(t, err)
	var back harness.Divergence
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, *d, back)

	// The whole report renders as JSON and reads back.
	js, err = json.Marshal(rep)
	require.NoError(t, err)
	var rback harness.Report
	require.NoError(t, json.Unmarshal(js, &rback))
	require.Equal(t, rep.Divergence.Event, rback.Divergence.Event)
}

func TestTapeOnlyDivergence(t *testing.T) {
	s := linear(func(i int) string { return []string{"accept", "accept", "reject"}[i%3] }, constant("same"))
	rep, err := harness.Iterate(t.Context(), harness.Config{Iterations: 20, ArtifactDir: t.TempDir()}, "tape-only", s)
	require.ErrorIs(t, err, harness.ErrNondeterministic)
	require.Equal(t, 2, rep.Divergence.Run)
	require.Nil(t, rep.Divergence.Output)
	require.Equal(t, 1, rep.DistinctOutputs)
	require.Equal(t, 2, rep.DistinctTapes)
	require.Contains(t, rep.String(), "output bytes are identical; the tapes differ")
}

func TestAllowlistIsHonoured(t *testing.T) {
	s := linear(constant("accept"), constant("x"))
	rep, err := harness.Iterate(t.Context(), harness.Config{Allowlist: []harness.AllowEntry{}}, "strict", s)
	require.ErrorIs(t, err, harness.ErrNondeterministic, "with an empty allowlist the clock and IDs are compared")
	require.Equal(t, "EmittedAt", rep.Divergence.Event.Field)
	require.Contains(t, rep.String(), "(none: every field is compared)")

	_, err = harness.Iterate(t.Context(), harness.Config{Allowlist: []harness.AllowEntry{
		{Field: "EmittedAt", Reason: "clock"}, {Field: "AuditEventID", Reason: "ids"},
	}}, "no-budget-token", s)
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
		{"procs", harness.Config{Procs: []int{1, 0}}, "Procs[1] is 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := harness.Iterate(t.Context(), tt.cfg, "x", linear(constant("a"), constant("b")))
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
		rep, err := harness.Iterate(t.Context(), harness.Config{Budget: 25 * time.Second, Now: stepClock(time.Second)}, "slow", s)
		require.NoError(t, err, "above the floor an exceeded budget is loud, not a failure")
		require.True(t, rep.BudgetExceeded)
		require.Equal(t, 26, rep.Runs)
		require.Contains(t, rep.String(), "!!! TIME BUDGET EXCEEDED: 26 of 50 iterations ran")
		require.Contains(t, rep.Summary(), "BUDGET EXCEEDED")
	})
	t.Run("below-floor", func(t *testing.T) {
		rep, err := harness.Iterate(t.Context(), harness.Config{Budget: 5 * time.Second, Now: stepClock(time.Second)}, "slower", s)
		require.ErrorIs(t, err, harness.ErrBelowFloor)
		require.Equal(t, 6, rep.Runs)
		require.Contains(t, err.Error(), "made 6 runs, floor is 20: the time budget ran out")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var n int
		rep, err := harness.Iterate(ctx, harness.Config{}, "cancelled", func(ctx context.Context, i int) (harness.Outcome, error) {
			if n++; n == 5 {
				cancel()
			}
			return s(ctx, i)
		})
		require.ErrorIs(t, err, harness.ErrBelowFloor)
		require.Equal(t, 5, rep.Runs)
		require.Contains(t, err.Error(), "context was cancelled")
	})
}

func TestRunErrors(t *testing.T) {
	t.Run("error", func(t *testing.T) {
		boom := errors.New("cassette miss")
		rep, err := harness.Iterate(t.Context(), harness.Config{}, "err", func(ctx context.Context, i int) (harness.Outcome, error) {
			if i == 4 {
				return harness.Outcome{}, boom
			}
			return linear(constant("a"), constant("b"))(ctx, i)
		})
		require.ErrorIs(t, err, harness.ErrRunFailed)
		require.Equal(t, 5, rep.Runs)
		require.Equal(t, 4, rep.RunErrors[0].Run)
		require.Contains(t, rep.String(), "run 4 (GOMAXPROCS")
	})
	t.Run("panic", func(t *testing.T) {
		rep := checkReport(t, harness.Config{}, func(context.Context, int) (harness.Outcome, error) { panic("nil map") })
		require.ErrorIs(t, rep.Err(), harness.ErrRunFailed)
		require.Contains(t, rep.RunErrors[0].Err, "panic: nil map")
	})
}

// checkReport runs Iterate and returns the report whatever the verdict.
func checkReport(t *testing.T, cfg harness.Config, s harness.Scenario) *harness.Report {
	t.Helper()
	rep, _ := harness.Iterate(t.Context(), cfg, t.Name(), s)
	require.NotNil(t, rep)
	return rep
}

func TestGOMAXPROCSVariedAndRestored(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	var seen []int
	rep := harness.Check(t, harness.Config{Iterations: 20, Procs: []int{1, 3, 2}}, "procs", func(ctx context.Context, i int) (harness.Outcome, error) {
		seen = append(seen, runtime.GOMAXPROCS(0))
		return harness.Outcome{DiffBytes: []byte("x")}, nil
	})
	require.Equal(t, before, runtime.GOMAXPROCS(0))
	require.Equal(t, []int{1, 3, 2, 1, 3}, seen[:5])
	require.Equal(t, []int{1, 2, 3}, rep.GOMAXPROCS)
}

func TestFreshContextPerRun(t *testing.T) {
	var ctxs []context.Context
	harness.Check(t, harness.Config{Iterations: 20}, "ctx", func(ctx context.Context, i int) (harness.Outcome, error) {
		require.NoError(t, ctx.Err())
		ctxs = append(ctxs, ctx)
		return harness.Outcome{}, nil
	})
	for _, c := range ctxs {
		require.ErrorIs(t, c.Err(), context.Canceled, "each run's context is cancelled at its end")
	}
}

func TestBubbleClockDiffersPerRun(t *testing.T) {
	var times []time.Time
	harness.Check(t, harness.Config{Iterations: 20}, "clock", func(ctx context.Context, i int) (harness.Outcome, error) {
		times = append(times, time.Now())
		return harness.Outcome{}, nil
	})
	for i := 1; i < len(times); i++ {
		require.True(t, times[i].After(times[i-1]), "run %d reads %v, run %d reads %v", i-1, times[i-1], i, times[i])
	}
}

func TestIterateReportsLeakedGoroutine(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	rep := checkReport(t, harness.Config{Iterations: 20, LeakGrace: 20 * time.Millisecond}, func(ctx context.Context, i int) (harness.Outcome, error) {
		if i == 2 {
			go leakyWorker(release)
		}
		return harness.Outcome{}, nil
	})
	require.ErrorIs(t, rep.Err(), harness.ErrLeak)
	require.Len(t, rep.Leaks, 1)
	require.Equal(t, 2, rep.Leaks[0].Run)
	require.Len(t, rep.Leaks[0].Goroutines, 1)
	require.Contains(t, rep.Leaks[0].Goroutines[0].Stack, "leakyWorker")
	require.Contains(t, rep.String(), "run 2 leaked 1 goroutine(s)")
}

func leakyWorker(release chan struct{}) { <-release }

func TestIterateWaitsForGoroutinesThatExitOnCancel(t *testing.T) {
	rep := checkReport(t, harness.Config{Iterations: 20}, func(ctx context.Context, i int) (harness.Outcome, error) {
		go func() { <-ctx.Done() }()
		return harness.Outcome{}, nil
	})
	require.NoError(t, rep.Err())
}

// TestCheckBubbleFailures runs Check on a leaking and on a deadlocking
// scenario in a child process: a goroutine stuck in a synctest bubble can
// never be released, and must not outlive this test.
func TestCheckBubbleFailures(t *testing.T) {
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
	mode := os.Getenv("HARNESS_BUBBLE_CHILD")
	if mode == "" {
		t.Skip("run by TestCheckBubbleFailures")
	}
	harness.Check(t, harness.Config{Iterations: 20}, mode, func(ctx context.Context, i int) (harness.Outcome, error) {
		if i == 3 {
			ch := make(chan int)
			go stuckWorker(ch)
			if mode == "deadlock" {
				<-ch
			}
		}
		return harness.Outcome{}, nil
	})
}

func stuckWorker(ch chan int) { <-ch }

func TestReadTapeErrors(t *testing.T) {
	e := events.Event{Seq: 1, Kind: kindStarted, Payload: []byte(`{}`)}
	e.PayloadDigest = events.Sum(e.Payload)
	good := harness.AppendTape(nil, []events.Event{e, {Seq: 2, Parent: 1, Kind: kindBuilt, Payload: []byte(`1`), PayloadDigest: events.Sum([]byte(`1`))}})
	evs, err := harness.ReadTape(good)
	require.NoError(t, err)
	require.Len(t, evs, 2)

	_, err = harness.ReadTape(good[:len(good)-3])
	var te *harness.TapeError
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, te.Record)
	require.ErrorIs(t, err, events.ErrCorruptRecord)

	bad := harness.AppendTape(nil, []events.Event{{Seq: 1, Kind: kindStarted, Payload: []byte(`{}`)}})
	_, err = harness.ReadTape(bad)
	require.ErrorIs(t, err, harness.ErrCorruptTape)
	require.ErrorContains(t, err, "payload digest")
}

func TestReproCommand(t *testing.T) {
	t.Run("sub test", func(t *testing.T) {
		cmd := harness.ReproCommand(t)
		require.Contains(t, cmd, `go test -run '^TestReproCommand$/^sub_test$' -count=1 -artifacts ./harness`)
	})
}
