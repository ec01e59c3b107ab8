package harness

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
)

// maxAttribution bounds the perturbations tried one by one.
const maxAttribution = 24

// attributionTries is how many times each control and each perturbation
// is made. A perturbation is named only when each of its tries differs
// from the test process's runs, no control does, and no other
// perturbation's tries disagree among themselves. Against state that is
// random per process, differing from the test process's with probability
// q in each fresh process, blaming an innocent perturbation then needs
// every control to match by chance, the innocent one's three tries to
// differ by chance and every other perturbation's three tries to agree:
// below 1 in 1000 at any q with the dozen perturbations a child makes
// (with one try each, at q = 1/2, some perturbation is blamed almost
// always). Three, not more, because the controls and tries are made only
// when a gate already failed with only child processes differing, two
// at a time.
const attributionTries = 3

// attribute traces the largest class made only of child runs that
// delivered a report, when every run in the test process fell into one
// class. It returns nil otherwise.
func (b *childBatch) attribute(ctx context.Context, g *grouper, classes []*group) *gate.Causes {
	var base, target *group
	targetClass := 0
	for i, c := range classes {
		switch {
		case c.InProcess > 0 && base != nil:
			return nil // the test process alone already differs
		case c.InProcess > 0:
			base = c
		case target == nil && len(c.procs) > 0 && c.ErrorKind != errorKindChild:
			target, targetClass = c, i+1
		}
	}
	if base == nil || target == nil || base.first == nil {
		return nil
	}
	run := target.procs[0].Run
	b.mu.Lock()
	p := b.plans[run]
	b.mu.Unlock()
	baseKey := g.keyOf(base.first)
	cs := &gate.Causes{Run: run, Class: targetClass}
	// try makes run once more in a fresh process perturbed by q.
	try := func(q childproc.Plan) attempt {
		o, _ := b.run(ctx, run, q, false)
		switch {
		case o == nil:
			return attempt{fail: "not run: the gate was stopped"}
		case o.errKind == errorKindChild:
			return attempt{fail: maskText(o.errText, b.rc.Cassette.APIKey)}
		}
		k := g.keyOf(o)
		return attempt{differs: k != baseKey, key: k}
	}
	controls := tryEach([]childproc.Plan{{}}, try)[0]
	for _, a := range controls {
		if a.fail != "" {
			cs.Failed = append(cs.Failed, "fresh process: "+firstLine(a.fail))
			continue
		}
		cs.Controls++
		if a.differs {
			cs.ControlsDiffered++
		}
	}
	switch {
	case cs.Controls > 0 && cs.ControlsDiffered == cs.Controls:
		cs.FreshProcess = true
		cs.Carried = target.first != nil
		for _, a := range controls {
			cs.Carried = cs.Carried && (a.fail != "" || a.key == g.keyOf(target.first))
		}
		return cs
	case cs.ControlsDiffered > 0:
		return cs
	}
	dims := p.Dims()
	if len(dims) > maxAttribution {
		dims = dims[:maxAttribution]
	}
	cs.Tried = dims
	plans := make([]childproc.Plan, len(dims))
	for i, d := range dims {
		plans[i] = p.Only(d)
	}
	var depends []string
	for i, as := range tryEach(plans, try) {
		differed, fail := 0, ""
		for _, a := range as {
			if a.differs {
				differed++
			}
			if a.fail != "" && fail == "" {
				fail = a.fail
			}
		}
		switch {
		case fail != "":
			cs.Failed = append(cs.Failed, fmt.Sprintf("%s: %s", dims[i], firstLine(fail)))
		case differed == len(as):
			depends = append(depends, dims[i])
		case differed > 0:
			cs.Unsteady = append(cs.Unsteady, fmt.Sprintf("%s: %d of %d", dims[i], differed, len(as)))
		}
	}
	if len(cs.Unsteady) == 0 {
		cs.Depends = depends
	}
	return cs
}

// attempt is one try of a control or a perturbation: its outcome's class
// differs from the test process's runs, or the child failed.
type attempt struct {
	differs bool
	key     classKey
	fail    string
}

// tryEach makes attributionTries tries of each plan, childParallel at a
// time, and returns them by plan.
func tryEach(plans []childproc.Plan, try func(childproc.Plan) attempt) [][]attempt {
	out := make([][]attempt, len(plans))
	for i := range out {
		out[i] = make([]attempt, attributionTries)
	}
	sem := make(chan struct{}, childParallel)
	var wg sync.WaitGroup
	for i, q := range plans {
		for k := range attributionTries {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				out[i][k] = try(q)
			})
		}
	}
	wg.Wait()
	return out
}

// freshClass returns the class (1-based) that holds run 0 of the test
// process and every child run that reported, and no other run of the
// test process, when the test process made other runs: the first run of
// each process differs from the later ones, so state is carried across
// runs. It returns 0 otherwise.
func freshClass(classes []*group) int {
	inProcess, children := 0, 0
	for _, c := range classes {
		inProcess += c.InProcess
		if c.ErrorKind != errorKindChild {
			children += len(c.procs)
		}
	}
	for i, c := range classes {
		if c.FirstRun == 0 && c.InProcess == 1 && children > 0 && len(c.procs) == children && inProcess > 1 {
			return i + 1
		}
	}
	return 0
}

// traceInProcess traces a difference between runs of the test process to
// one thing each run varies (its stream chunking, its replayed latency):
// the largest class, other than run 0's, whose first run varied it
// (varied) is made again as it was, and must fall into its class again,
// then controls times with the thing as run 0 had it (asRun0(run, true)
// meanwhile), and each must fall into run 0's class. It returns that
// class (1-based) and run, and whether the thing is the cause; class 0
// when no class qualifies.
func traceInProcess(ctx context.Context, rc *resolved, e env, g *grouper, classes []*group,
	varied func(run int) bool, asRun0 func(run int, on bool), controls int) (class, run int, cause bool) {
	keys := make(map[*group]classKey, len(g.classes))
	for k, c := range g.classes {
		keys[c] = k
	}
	var base *group
	for _, c := range classes {
		if c.FirstRun == 0 {
			base = c
		}
	}
	if base == nil {
		return 0, 0, false
	}
	for i, c := range classes {
		if c == base || c.ErrorKind == errorKindHung || !varied(c.FirstRun) {
			continue
		}
		remake := func(as0 bool) (classKey, bool) {
			asRun0(c.FirstRun, as0)
			defer asRun0(c.FirstRun, false)
			procs := rc.Procs[c.FirstRun%len(rc.Procs)]
			runtime.GOMAXPROCS(procs)
			o := e.run(ctx, c.FirstRun, procs)
			return g.keyOf(&o), ctx.Err() == nil && o.errKind != errorKindHung
		}
		if k, ok := remake(false); !ok || k != keys[c] {
			return i + 1, c.FirstRun, false
		}
		for range controls {
			if k, ok := remake(true); !ok || k != keys[base] {
				return i + 1, c.FirstRun, false
			}
		}
		return i + 1, c.FirstRun, true
	}
	return 0, 0, false
}
