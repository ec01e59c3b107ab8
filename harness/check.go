package harness

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/codegenie/codegenie/internal/hint"
)

// Check is Iterate for tests: it runs the gate and marks t failed (t.Error)
// with the full report when the runs differ, a run fails or leaks, or fewer
// than the floor were made; on success it logs a one-line summary. It
// returns the report either way, so the caller can record it; a
// configuration error stops the test (t.Fatal) and returns nil.
//
// When t is a *testing.T every run executes in its own testing/synctest
// bubble: time inside is a fake clock, set to a different instant for each
// run (so a wall-clock value reaching the output is caught), and a
// goroutine the run leaves blocked fails that run, with its stack. The
// scenario must therefore not use real network I/O (use an in-process
// transport or a cassette) and must not call t.Run or t.Parallel. Any
// other testing.TB (a *testing.B, say) gets Iterate's isolation.
//
// Empty cfg.ArtifactDir means t.ArtifactDir() (kept with go test
// -artifacts); empty cfg.ReproCommand means a go test command for this
// test.
func Check(t testing.TB, cfg Config, name string, s Scenario) *Report {
	t.Helper()
	if cfg.ReproCommand == "" {
		cfg.ReproCommand = ReproCommand(t)
	}
	rc, err := cfg.resolve()
	if err != nil {
		t.Fatalf("harness.Check %s: %v", name, err)
		return nil
	}
	e := env{artifactDir: func() (string, error) { return t.ArtifactDir(), nil }}
	if rc.ArtifactDir != "" {
		e.artifactDir = nil
	}
	if tt, ok := t.(*testing.T); ok {
		b := &bubbleRunner{t: tt, reported: map[int]bool{}}
		e.isolation = "synctest bubble per run"
		e.run = b.run
	} else {
		lw := newLeakWatcher(rc.LeakGrace)
		e.isolation = "goroutine (leaks found by stack diff)"
		e.run = lw.run
	}
	rep, err := iterate(t.Context(), rc, name, s, e)
	if err != nil {
		msg := rep.String()
		if e.artifactDir != nil && !artifactsKept() {
			msg += "note: the evidence above is in t.ArtifactDir(), which go test deletes when the test ends unless -artifacts is set; run the reproduce command (it passes -artifacts) to keep it\n"
		}
		t.Errorf("%s", msg)
		return rep
	}
	if rep.BudgetExceeded {
		t.Logf("%s", rep)
		return rep
	}
	t.Logf("%s", rep.Summary())
	return rep
}

// artifactsKept reports whether go test was run with -artifacts, which
// keeps t.ArtifactDir() after the test.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// bubbleRunner runs each iteration inside synctest.Test.
type bubbleRunner struct {
	t        *testing.T
	reported map[int]bool // leaked goroutines already attributed to a run
}

// clockStep is how far each run's fake clock is moved before the scenario
// starts: run i starts at the bubble epoch plus (i+1) clock steps plus i
// microseconds, so no two runs read the same time.
const clockStep = time.Hour

func (b *bubbleRunner) run(ctx context.Context, iter int, s Scenario, perturb bool) (res iterResult) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(error)
		if !ok || !strings.HasPrefix(err.Error(), "deadlock: ") {
			panic(r)
		}
		stuck := b.bubbled()
		if strings.Contains(err.Error(), "main bubble goroutine has exited") {
			res.leaks = stuck
			return
		}
		var sb strings.Builder
		for _, g := range stuck {
			fmt.Fprintf(&sb, "\n%s\n", g.Stack)
		}
		res.err = fmt.Errorf("%v (every goroutine of the run is blocked; stacks:)%s", err, sb.String())
	}()
	parent := context.WithoutCancel(ctx)
	synctest.Test(b.t, func(*testing.T) {
		time.Sleep(time.Duration(iter+1)*clockStep + time.Duration(iter)*time.Microsecond)
		res = runIteration(parent, iter, s, perturb)
	})
	return res
}

// bubbled returns the goroutines stuck in a synctest bubble that were not
// reported before: after a deadlock panic they are the run's.
func (b *bubbleRunner) bubbled() []Goroutine {
	var out []Goroutine
	for _, g := range dumpGoroutines() {
		if strings.Contains(g.State, "synctest bubble") && !b.reported[g.ID] {
			b.reported[g.ID] = true
			out = append(out, g)
		}
	}
	return out
}

// ReproCommand returns the go test command that reruns exactly the test t
// (anchored -run pattern, -count=1, -artifacts to keep the evidence), from
// the root of the module under test. It is the default Config.ReproCommand
// in Check.
func ReproCommand(t testing.TB) string {
	_, bench := t.(*testing.B)
	return hint.GoTest(t.Name(), bench, "-artifacts")
}
