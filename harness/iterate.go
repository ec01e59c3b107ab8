package harness

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
)

// procsMu serialises gate runs in a process: GOMAXPROCS is process-wide,
// so two concurrent gates would fight over it and restore it wrongly.
var procsMu sync.Mutex

// env is what differs between Iterate and Check.
type env struct {
	isolation string
	// run makes one run in the test process.
	run func(ctx context.Context, iter, procs int) outcome
	// children makes runs in child processes; nil for none.
	children *childproc.Runner
	// artifactDir is the default evidence directory.
	artifactDir func() (string, error)
	// noEvidence skips writing evidence (the harness's own rate
	// measurements make thousands of divergences).
	noEvidence bool
}

// Iterate runs s c.Iterations times in this process, each run in a fresh
// goroutine with a fresh context, groups the runs into classes and judges
// them. It returns the report and report.Err(): nil only for a Pass
// verdict over at least c.Floor runs. A configuration error returns a nil
// report.
//
// Outside a test there is no synctest bubble and no test binary to rerun:
// goroutines still alive after a run's context was cancelled (goleak.Find's
// retries give them time to exit),
// and not descended from a goroutine that existed before, are reported
// with their stacks, and no run is made in a child process. Gate runs in
// one process are serialised (GOMAXPROCS is process-wide).
func (c Config) Iterate(ctx context.Context, name string, s Scenario) (*Report, error) {
	rc, err := c.resolve()
	if err != nil {
		return nil, err
	}
	lw := newLeakWatcher()
	e := env{
		isolation: "goroutine per run (leaks found with goleak)",
		run: func(ctx context.Context, iter, procs int) outcome {
			return lw.run(ctx, &rc, iter, procs, s)
		},
	}
	rep := newReport(&rc, name)
	iterate(ctx, &rc, rep, s, e)
	return rep, rep.Err()
}

func newReport(rc *resolved, name string) *Report {
	rep := &Report{
		Outcome:   gate.Outcome{Scenario: name, Iterations: rc.Iterations, Floor: rc.Floor},
		Budget:    rc.Budget,
		Allowlist: rc.Allowlist,
	}
	if rc.repro != nil {
		rep.ReproCommand = rc.repro.String()
	}
	return rep
}

// iterate makes the runs (in this process and, through e.children, in
// child processes), groups them and fills rep.
func iterate(ctx context.Context, rc *resolved, rep *Report, s Scenario, e env) {
	procsMu.Lock()
	defer procsMu.Unlock()
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	rep.Isolation = e.isolation + orderNote()
	rc.chunks = &chunkState{}
	rc.latency = &latencyState{}

	g := newGrouper(rc.strip)
	g.key = rc.Cassette.APIKey
	start := rc.Now()
	var kids *childBatch
	inChild := map[int]bool{}
	if e.children != nil && rc.ProcessPerRun {
		inChild = everyRun(rc.Iterations)
	} else if e.children != nil && rc.Processes > 0 {
		inChild = childIterations(rc.Iterations, rc.Processes)
	}
	for i := range rc.Iterations {
		if kids == nil && len(inChild) > 0 && (i == 1 || inChild[0]) {
			// After run 0, which may have recorded the cassettes the
			// children replay.
			kids = startChildren(ctx, e.children, rc, inChild)
		}
		if inChild[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			rep.Cancelled = "the context was cancelled (" + err.Error() + ")"
			break
		}
		procs := rc.Procs[i%len(rc.Procs)]
		runtime.GOMAXPROCS(procs)
		rep.noteProcs(procs)
		o := e.run(ctx, i, procs)
		if i == 0 {
			if recorded := rc.opened.recorded(); len(recorded) > 0 {
				// The run recorded cassettes (the record switch): it is
				// made again, replaying what it recorded (or, for a
				// recording that was not saved, what was there before),
				// like every other run. When it failed and a recording
				// was not saved, its own error is what to fix.
				rep.Recorded = rc.opened.saved()
				if o.ownErr != "" && len(rep.Recorded) < len(recorded) {
					rep.RecordingError = maskText(o.ownErr, rc.Cassette.APIKey)
				}
				o = e.run(ctx, i, procs)
			}
		}
		g.add(&o)
		rep.Runs++
		if o.errKind == errorKindHung {
			// Its goroutines still run: no run may start beside them.
			rep.Cancelled = fmt.Sprintf("run %d hung", i)
			break
		}
		if rc.FailFast && len(g.classes) > 1 {
			rep.FailedFast = true
			break
		}
		if rc.Budget > 0 && rc.Now().Sub(start) > rc.Budget {
			rep.BudgetExceeded = i+1 < rc.Iterations
			break
		}
	}
	if kids != nil {
		// A child still running after a stop is killed: after fail-fast or
		// a cancellation it is dropped, after the budget it is a failure.
		stopped := rep.FailedFast || rep.Cancelled != ""
		if stopped || rep.BudgetExceeded {
			kids.stop(stopped)
		}
		for _, o := range kids.wait() {
			g.add(o)
			rep.Runs++
			rep.ProcessRuns++
		}
		rep.Processes = kids.summary()
	}
	rep.Wall = rc.Now().Sub(start)
	classes := judge(rc, rep, g)
	if kids != nil && rep.Verdict == gate.Nondeterministic {
		rep.FreshClass = freshClass(classes)
	}
	if kids != nil && rep.Verdict == gate.Nondeterministic && !rep.BudgetExceeded && ctx.Err() == nil {
		rep.Causes = kids.attribute(ctx, g, classes)
		if rep.Causes != nil && rep.Causes.Carried {
			rep.FreshClass = rep.Causes.Class
		}
	}
	rc.chunks.finish(ctx, rc, rep, e, g, classes)
	rc.latency.finish(ctx, rc, rep, e, g, classes)
	// A recording is kept only when the replay gate after it passes.
	rep.RecordingDiscarded = rc.opened.keepIfPassed(rep)
	if rep.Verdict != gate.Pass && rep.Verdict != "" && !e.noEvidence {
		writeEvidence(rc, e, rep, g)
	}
}

// judge fills the verdict, the classes and the comparison of the two
// largest classes.
func judge(rc *resolved, rep *Report, g *grouper) []*group {
	classes := g.result()
	rep.Verdict = verdict(classes)
	for i, c := range classes {
		rep.Classes = append(rep.Classes, c.Class)
		if rep.Processes != nil {
			for _, p := range c.procs {
				p.Class = i + 1
				rep.Processes.Children = append(rep.Processes.Children, p)
			}
		}
		if c.ErrorKind == errorKindLeak && c.first != nil && len(rep.Leaks) < maxKept {
			rep.Leaks = append(rep.Leaks, Leak{Run: c.FirstRun, Goroutines: c.first.leaks})
		}
	}
	if len(classes) == 0 {
		return classes
	}
	top := classes[0]
	rep.Key, rep.OutputDigest, rep.ChainDigest, rep.Events = top.Key, top.OutputDigest, top.ChainDigest, top.Events
	if top.first != nil {
		rep.Components = top.first.pin
	}
	if len(classes) > 1 {
		rep.Divergence = compare(rc, classes[0], classes[1])
		rep.Divergence.Assignment = assignmentDiff(classes, rc.Cassette.APIKey)
	}
	if !rep.OK() && rc.repro != nil {
		rep.addCommand(*rc.repro)
	}
	// Recording again is the answer only when every run missed the
	// cassette the same way, and this gate did not just record it.
	if rep.Verdict == gate.Broken && reRecordFixes(top.ErrorKind) && len(rc.opened.recorded()) == 0 {
		if c, ok := reRecordCommand(rc, rep, rc.opened.list()); ok {
			rep.addCommand(c)
		}
	}
	return classes
}
