package harness

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/codegenie/codegenie/internal/excerpt"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/replay"
)

// Outcome is what one run of a scenario produced: the output bytes (for
// the fallback tier, Transform.DiffBytes) and the event tape.
type Outcome struct {
	DiffBytes []byte
	Events    []events.Event
	// Pin is the run's pin (RunKey and four-tuple), optional: it goes into
	// the metadata of the replay bundle written as evidence. The harness
	// never compares it; the tape's first event carries it.
	Pin replay.Pin
}

// Scenario runs the code under test once. iter is the 0-based run number;
// a scenario must not let it influence the outcome (it exists for logging
// and for tests of the harness itself). ctx is cancelled when the run ends.
//
// A returned error fails the gate: a scenario whose expected result is a
// failure (an unusable completion, say) should put that result in the
// Outcome, so that it is compared like any other. A scenario that fails
// should still return the partial Outcome (the events recorded so far):
// the harness compares it with run 0 to show where the failing run left
// the common path.
type Scenario func(ctx context.Context, iter int) (Outcome, error)

// The conditions a gate run fails on. Report.Err wraps each that applies.
var (
	// ErrNondeterministic: two runs produced different output bytes or
	// different tapes (after stripping the allowlist).
	ErrNondeterministic = errors.New("nondeterministic")
	// ErrBelowFloor: fewer runs than Config.Floor were made.
	ErrBelowFloor = errors.New("fewer runs than the floor")
	// ErrLeak: goroutines started by a run were still alive after it.
	ErrLeak = errors.New("goroutine leak")
	// ErrRunFailed: the scenario returned an error, panicked or deadlocked.
	ErrRunFailed = errors.New("run failed")
)

// procsMu serialises gate runs in a process: GOMAXPROCS is process-wide,
// so two concurrent runs would fight over it and restore it wrongly.
var procsMu sync.Mutex

// env is what differs between Iterate and Check.
type env struct {
	isolation   string
	run         func(ctx context.Context, iter int, s Scenario, perturb bool) iterResult
	artifactDir func() (string, error)
	// noEvidence skips writing evidence files (the harness's own rate
	// measurements make thousands of divergences).
	noEvidence bool
}

// iterResult is one run as the isolation layer saw it.
type iterResult struct {
	out   Outcome
	err   error
	leaks []Goroutine
}

// runRecord is one run as the comparison keeps it.
type runRecord struct {
	run    int
	procs  int
	out    Outcome
	output events.Digest
	chain  events.Digest
}

// Iterate runs s cfg.Iterations times, each in a fresh goroutine with a
// fresh context, and compares the runs. It returns the report and
// report.Err(): nil only when every run produced the same output bytes and
// the same tape, no goroutine leaked, and at least cfg.Floor runs were
// made. A configuration error returns a nil report.
//
// Outside a test there is no synctest bubble: goroutines still alive
// cfg.LeakGrace after a run's context was cancelled, and not descended from
// a goroutine that existed before, are reported with their stacks. Gate
// runs in one process are serialised (GOMAXPROCS is process-wide).
func Iterate(ctx context.Context, cfg Config, name string, s Scenario) (*Report, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	lw := newLeakWatcher(rc.LeakGrace)
	e := env{
		isolation: "goroutine (leaks found by stack diff)",
		run: func(ctx context.Context, iter int, s Scenario, perturb bool) iterResult {
			return lw.run(ctx, iter, s, perturb)
		},
	}
	return iterate(ctx, rc, name, s, e)
}

func iterate(ctx context.Context, rc resolved, name string, s Scenario, e env) (*Report, error) {
	procsMu.Lock()
	defer procsMu.Unlock()
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)

	rep := &Report{
		Scenario:     name,
		Iterations:   rc.Iterations,
		Floor:        rc.Floor,
		Budget:       rc.Budget,
		Allowlist:    rc.Allowlist,
		Isolation:    e.isolation,
		ReproCommand: rc.ReproCommand,
	}
	outputs := map[events.Digest]int{}
	tapes := map[events.Digest]int{}
	var ref, first *runRecord
	start := rc.Now()
	for i := range rc.Iterations {
		if err := ctx.Err(); err != nil {
			rep.Cancelled = err.Error()
			break
		}
		procs := rc.Procs[i%len(rc.Procs)]
		runtime.GOMAXPROCS(procs)
		rep.noteProcs(procs)
		res := e.run(ctx, i, s, !rc.NoPerturb)
		rep.Runs++
		if len(res.leaks) > 0 {
			rep.Leaks = append(rep.Leaks, Leak{Run: i, Goroutines: res.leaks})
		}
		rec := &runRecord{
			run:    i,
			procs:  procs,
			out:    res.out,
			output: events.Sum(res.out.DiffBytes),
			chain:  events.ChainStripped(res.out.Events, rc.strip),
		}
		if res.err != nil {
			rep.RunErrors = append(rep.RunErrors, RunError{Run: i, GOMAXPROCS: procs, Err: res.err.Error()})
			// A failed run's partial tape still says where it left run 0's
			// path: a nondeterminism upstream often surfaces as an error
			// downstream (a cassette miss, an unparseable answer).
			if ref != nil && first == nil && (len(res.out.Events) > 0 || len(res.out.DiffBytes) > 0) &&
				(rec.output != ref.output || rec.chain != ref.chain) {
				outputs[rec.output]++
				tapes[rec.chain]++
				first = rec
			}
			break
		}
		outputs[rec.output]++
		tapes[rec.chain]++
		switch {
		case ref == nil:
			ref = rec
			rep.OutputDigest, rep.ChainDigest = rec.output, rec.chain
			rep.Events = len(rec.out.Events)
		case first == nil && (rec.output != ref.output || rec.chain != ref.chain):
			first = rec
		}
		// Only run 0 and the first divergent run are kept in full; the
		// others are kept as their two digests.
		if rc.Budget > 0 && i+1 < rc.Iterations && rc.Now().Sub(start) > rc.Budget {
			rep.BudgetExceeded = true
			break
		}
	}
	rep.Wall = rc.Now().Sub(start)
	rep.DistinctOutputs = len(outputs)
	rep.DistinctTapes = len(tapes)
	if first != nil {
		rep.Divergence = diverge(ref, first, rc, rep)
	}
	if first != nil && !e.noEvidence {
		dir, err := evidenceDir(rc, e, name)
		if err == nil {
			rep.Divergence.Evidence, err = writeEvidence(dir, ref, first, rep)
		}
		if err != nil {
			rep.EvidenceError = err.Error()
		}
	}
	return rep, rep.Err()
}

// diverge builds the harness-level divergence between run 0 and the first
// run that differs from it.
func diverge(ref, other *runRecord, rc resolved, rep *Report) *Divergence {
	d := &Divergence{
		Run:             other.run,
		GOMAXPROCS:      other.procs,
		RefGOMAXPROCS:   ref.procs,
		DistinctOutputs: rep.DistinctOutputs,
		DistinctTapes:   rep.DistinctTapes,
		ReproCommand:    rc.ReproCommand,
	}
	if ref.output != other.output {
		a, b := ref.out.DiffBytes, other.out.DiffBytes
		off, _ := excerpt.FirstDiff(a, b)
		d.Output = &OutputDiff{
			Offset:   off,
			LenA:     len(a),
			LenB:     len(b),
			DigestA:  ref.output,
			DigestB:  other.output,
			ExcerptA: excerpt.Around(a, off, excerpt.Radius),
			ExcerptB: excerpt.Around(b, off, excerpt.Radius),
		}
	}
	if ref.chain != other.chain {
		d.Event = events.Scan(ref.out.Events, other.out.Events, rc.strip)
	}
	return d
}

// runIteration is the body of one run, in its own goroutine: perturb the
// schedule, run the scenario under a fresh context, cancel it, and wait for
// the perturbing goroutines. Panics become errors.
func runIteration(ctx context.Context, iter int, s Scenario, perturb bool) (res iterResult) {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := func() {}
	if perturb {
		wait = perturbSchedule(iter)
	}
	defer wait()
	defer func() {
		if r := recover(); r != nil {
			res.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	out, err := s(ictx, iter)
	return iterResult{out: out, err: err}
}

// perturbSchedule starts a few goroutines that yield a run-dependent number
// of times while the scenario runs, and yields the calling goroutine a
// run-dependent number of times, so that the run queue each run sees is
// different. It returns a function that waits for the yielders.
func perturbSchedule(iter int) (wait func()) {
	var wg sync.WaitGroup
	for k := range iter % 4 {
		n := (iter*7+k*3)%11 + 1
		wg.Go(func() {
			for range n {
				runtime.Gosched()
			}
		})
	}
	for range iter % 3 {
		runtime.Gosched()
	}
	return wg.Wait
}
