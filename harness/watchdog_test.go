package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// blockOnPipe reads from a pipe nobody writes until release is called: a
// run blocked on I/O, which a synctest bubble cannot see as a deadlock.
func blockOnPipe(t *testing.T) (block func(), release func()) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	block = func() { _, _ = r.Read(make([]byte, 1)) }
	release = func() {
		w.Close()
		abandoned.Wait()
		r.Close()
	}
	return block, release
}

// TestHungRunInBubble: a run blocked on a pipe inside its bubble fails as
// hung after Config.RunTimeout, naming the run with the stacks of its
// goroutines; no further run starts and the gate still reports, writes
// its evidence and records its result, instead of hanging until go test's
// -timeout.
func TestHungRunInBubble(t *testing.T) {
	block, release := blockOnPipe(t)
	defer release()
	s := func(ctx context.Context, run *Run) ([]byte, error) {
		if run.Index() == 3 {
			blockOnPipeInRun(block)
		}
		return []byte("ok"), nil
	}
	done := make(chan *Report, 1)
	go func() {
		done <- Config{Iterations: 20, Processes: -1, RunTimeout: 500 * time.Millisecond}.check(t, "hung-in-bubble", s, false)
	}()
	var rep *Report
	select {
	case rep = <-done:
	case <-time.After(time.Minute):
		release()
		<-done
		t.Fatal("the gate hung with its run: no watchdog")
	}
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Equal(t, 4, rep.Runs, "no run starts after the hung one")
	require.Len(t, rep.Classes, 2)
	hung := rep.Classes[1]
	require.Equal(t, errorKindHung, hung.ErrorKind)
	require.Equal(t, 3, hung.FirstRun)
	require.Contains(t, hung.Message, "run 3 hung: it did not end within 500ms (Config.RunTimeout)")
	require.Contains(t, hung.Message, "blockOnPipeInRun", "the stack of the blocked goroutine")
	require.NotEmpty(t, rep.Evidence, "the evidence was written")
	err := rep.Err()
	require.ErrorIs(t, err, errBelowFloor)
	require.Contains(t, err.Error(), "run 3 hung")
	var found bool
	for _, r := range processResults() {
		found = found || r.Scenario == "hung-in-bubble" && r.Verdict == gate.Nondeterministic
	}
	require.True(t, found, "the result was recorded")
}

// blockOnPipeInRun is a named frame for the stack the report shows.
//
//go:noinline
func blockOnPipeInRun(block func()) { block() }

// TestHungRunIterate: outside a bubble the hung run's context is
// cancelled, and it fails as hung the same way.
func TestHungRunIterate(t *testing.T) {
	block, release := blockOnPipe(t)
	defer release()
	s := func(ctx context.Context, run *Run) ([]byte, error) {
		if run.Index() == 1 {
			blockOnPipeInRun(block)
		}
		return []byte("ok"), nil
	}
	rep, err := Config{Iterations: 20, RunTimeout: 300 * time.Millisecond}.Iterate(t.Context(), "hung-iterate", s)
	require.Error(t, err)
	require.Equal(t, 2, rep.Runs)
	require.Equal(t, errorKindHung, rep.Classes[1].ErrorKind)
	require.Contains(t, rep.Classes[1].Message, "blockOnPipeInRun")
}

// TestRunLimitBeforeDeadline: the bound ends before go test's -timeout,
// so the report is written before the test binary is killed.
func TestRunLimitBeforeDeadline(t *testing.T) {
	t.Parallel()
	rc := &resolved{Config: Config{RunTimeout: time.Hour}}
	limit, why := runLimit(rc, time.Now().Add(time.Minute))
	require.Less(t, limit, time.Minute-deadlineMargin+time.Second)
	require.Contains(t, why, "-timeout")
	limit, why = runLimit(rc, time.Time{})
	require.Equal(t, time.Hour, limit)
	require.Equal(t, "Config.RunTimeout", why)
}

// TestWatchdogRunEndingAtItsLimit: a run whose outcome comes at the very
// instant its limit passes is past its limit in each of 100 synctest
// bubbles, where the two fall at one instant of the fake clock; one that
// ends a nanosecond sooner ended in time. The run's 1000 goroutines all
// wake at that instant and their timers were set before the watchdog's,
// so another processor can run the one that sends the outcome while the
// runtime is still firing timers: a select between the outcome and the
// limit's timer took the outcome in 10 to 13 of these 100 bubbles.
func TestWatchdogRunEndingAtItsLimit(t *testing.T) {
	t.Parallel()
	const limit = 500 * time.Millisecond
	for _, tt := range []struct {
		name   string
		ends   time.Duration
		inTime bool
	}{
		{"at its limit", limit, false},
		{"a nanosecond before", limit - time.Nanosecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			outcomes := map[string]int{}
			for range 100 {
				synctest.Test(t, func(t *testing.T) {
					done := make(chan outcome, 1)
					start := time.Now()
					go func() {
						time.Sleep(tt.ends)
						done <- outcome{iter: 7}
					}()
					for range 999 {
						go time.Sleep(tt.ends)
					}
					synctest.Wait() // every goroutine of the run is asleep
					o, ended, ok := await(limit, done)
					decided := time.Since(start)
					<-ended
					outcomes[fmt.Sprintf("in time %v, run %d, decided after %v", ok, o.iter, decided)]++
				})
			}
			want := fmt.Sprintf("in time false, run 0, decided after %v", limit)
			if tt.inTime {
				want = fmt.Sprintf("in time true, run 7, decided after %v", tt.ends)
			}
			require.Equal(t, map[string]int{want: 100}, outcomes)
		})
	}
}

// TestStrayPanicProcessPerRun: a panic in a goroutine the scenario
// started cannot be recovered and kills its process; with ProcessPerRun
// that process is a child, whose run fails, and the test process reports.
func TestStrayPanicProcessPerRun(t *testing.T) {
	s := func(ctx context.Context, run *Run) ([]byte, error) {
		if inChild() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				panic("stray goroutine panics")
			}()
			<-done
		}
		return []byte("ok"), nil
	}
	rep := Config{Iterations: 4, Floor: 4, ProcessPerRun: true, ChildTimeout: time.Minute}.check(t, "stray-panic", s, false)
	require.Equal(t, gate.Broken, rep.Verdict, "%s", rep)
	require.Equal(t, 4, rep.ProcessRuns, "every run was made in a child")
	require.Equal(t, errorKindChild, rep.Classes[0].ErrorKind)
	require.Contains(t, rep.Classes[0].Message, "crashed")
	require.True(t, strings.Contains(rep.Classes[0].Message, "stray goroutine panics"), "%s", rep.Classes[0].Message)
}
