package harness

import (
	"context"
	"errors"
	"flag"
	"maps"
	"slices"
	"sync"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/childproc"
)

// childParallel is how many child processes of a gate run at a time.
const childParallel = 2

// everyRun is every run of a gate made in child processes (ProcessPerRun):
// all of them, but run 0 when the cassettes record switch is on, for it
// records in the test process.
func everyRun(iterations int) map[int]bool {
	out := make(map[int]bool, iterations)
	for i := range iterations {
		out[i] = true
	}
	if f := flag.Lookup(cassettes.RecordFlag); f != nil && f.Value.String() != "" {
		delete(out, 0)
	}
	return out
}

// childBatch is the children of one gate, running in the background.
type childBatch struct {
	r      *childproc.Runner
	rc     *resolved
	pl     *childproc.Planner
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	stopped bool // results of children killed by stop are dropped
	drop    bool
	out     []*outcome
	plans   map[int]childproc.Plan
}

// startChildren launches the runs iters in child processes started by r:
// the first alone, logging the environment variables the scenario reads;
// then the others, childParallel at a time, with those variables set to
// other values.
func startChildren(ctx context.Context, r *childproc.Runner, rc *resolved, iters map[int]bool) *childBatch {
	cctx, cancel := context.WithCancel(ctx)
	b := &childBatch{r: r, rc: rc, ctx: cctx, cancel: cancel, done: make(chan struct{}), plans: map[int]childproc.Plan{}}
	b.pl = childproc.NewPlanner(rc.configVar)
	runs := slices.Sorted(maps.Keys(iters))
	go func() {
		defer close(b.done)
		if len(runs) == 0 {
			return
		}
		o, read := b.run(cctx, runs[0], b.plan(runs[0], 0), true)
		b.keep(o)
		b.pl.Discovered(read)
		sem := make(chan struct{}, childParallel)
		var wg sync.WaitGroup
		for j, run := range runs[1:] {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				o, _ := b.run(cctx, run, b.plan(run, j+1), false)
				b.keep(o)
			})
		}
		wg.Wait()
	}()
	return b
}

// plan returns the plan of child j, which makes run, and remembers it.
func (b *childBatch) plan(run, j int) childproc.Plan {
	p := b.pl.Plan(j)
	b.mu.Lock()
	b.plans[run] = p
	b.mu.Unlock()
	return p
}

// keep records a child's outcome, unless it was killed by a stop that
// drops results.
func (b *childBatch) keep(o *outcome) {
	if o == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped && b.drop && o.errKind == errorKindChild {
		return
	}
	b.out = append(b.out, o)
}

// stop kills the children still running and starts no more. drop: their
// runs are not counted (fail-fast, cancellation); else they fail (budget).
func (b *childBatch) stop(drop bool) {
	b.mu.Lock()
	b.stopped, b.drop = true, drop
	b.mu.Unlock()
	b.cancel()
}

// wait waits for every child and returns their outcomes by run.
func (b *childBatch) wait() []*outcome {
	<-b.done
	b.cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	slices.SortFunc(b.out, func(x, y *outcome) int { return x.iter - y.iter })
	return b.out
}

// summary describes how the children were perturbed.
func (b *childBatch) summary() *ProcessSummary {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &ProcessSummary{Runs: len(b.out), Parent: observe(-1)}
	s.EnvRead, s.EnvHeld, s.NotVaried = b.pl.Summary()
	return s
}

// run makes run iter in a new child process perturbed by p. With discover
// the child logs the environment variables it reads, which run returns.
// A child that cannot deliver its report becomes an outcome with a
// *childproc.Error; only a context already done gives nil (no run made).
func (b *childBatch) run(ctx context.Context, iter int, p childproc.Plan, discover bool) (*outcome, []string) {
	procs := b.rc.Procs[iter%len(b.rc.Procs)]
	o := &outcome{iter: iter, procs: procs}
	if ctx.Err() != nil {
		return nil, nil
	}
	var rep childReport
	read, err := b.r.Run(ctx, childproc.Child{Run: iter, Procs: procs, Plan: p, Discover: discover}, &rep)
	if err != nil {
		o.setErr(err)
		o.proc = &Process{Run: iter, GOMAXPROCS: procs, Env: p.Env()}
		if ce := (*childproc.Error)(nil); errors.As(err, &ce) {
			o.proc.PID = ce.PID
		}
		return o, nil
	}
	rep.fill(o)
	o.proc.Env = p.Env()
	return o, read
}
