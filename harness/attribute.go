package harness

import (
	"context"
	"fmt"
	"sync"
)

// Causes traces a difference that only child processes showed back to
// what was perturbed: a fresh process with nothing perturbed (the
// control), then one process per perturbation of the differing child,
// each alone, all making the same run.
type Causes struct {
	// Run is the child run traced and Class its class (1-based).
	Run   int `json:"run"`
	Class int `json:"class"`
	// FreshProcess says the control differed too: the outcome depends on
	// the process itself (its pid, start time, addresses or start-up
	// state), not on anything perturbed.
	FreshProcess bool `json:"fresh_process,omitempty"`
	// Depends lists the perturbations that alone change the outcome, e.g.
	// "TZ (time zone)" or "environment variable REGION".
	Depends []string `json:"depends,omitempty"`
	// Tried lists every perturbation tried; Failed the tries whose child
	// failed to report (their error).
	Tried  []string `json:"tried,omitempty"`
	Failed []string `json:"failed,omitempty"`
}

// maxAttribution bounds the perturbations tried one by one.
const maxAttribution = 24

// attribute traces the largest class made only of child runs that
// delivered a report, when every run in the test process fell into one
// class. It returns nil otherwise.
func (b *childBatch) attribute(ctx context.Context, g *grouper, classes []*group) *Causes {
	var base, target *group
	targetClass := 0
	for i, c := range classes {
		switch {
		case c.InProcess > 0 && base != nil:
			return nil // the test process alone already differs
		case c.InProcess > 0:
			base = c
		case target == nil && len(c.Processes) > 0 && c.ErrorKind != errorKindChild:
			target, targetClass = c, i+1
		}
	}
	if base == nil || target == nil || base.first == nil {
		return nil
	}
	run := target.Processes[0].Run
	b.mu.Lock()
	p := b.plans[run]
	b.mu.Unlock()
	baseKey := g.keyOf(base.first)
	cs := &Causes{Run: run, Class: targetClass}
	differs := func(q plan) (bool, string) {
		o, _ := b.r.run(ctx, b.rc, run, q, false)
		if o == nil {
			return false, "not run: the gate was stopped"
		}
		if o.errKind == errorKindChild {
			return true, maskText(o.errText, b.rc.Cassette.APIKey)
		}
		return g.keyOf(o) != baseKey, ""
	}
	if d, fail := differs(plan{}); fail != "" {
		cs.Failed = append(cs.Failed, "fresh process: "+firstLine(fail))
	} else if d {
		cs.FreshProcess = true
		return cs
	}
	dims := p.dims()
	if len(dims) > maxAttribution {
		dims = dims[:maxAttribution]
	}
	cs.Tried = dims
	found := make([]bool, len(dims))
	fails := make([]string, len(dims))
	sem := make(chan struct{}, childParallel)
	var wg sync.WaitGroup
	for i, d := range dims {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			found[i], fails[i] = differs(p.only(d))
		})
	}
	wg.Wait()
	for i, d := range dims {
		if fails[i] != "" {
			cs.Failed = append(cs.Failed, fmt.Sprintf("%s: %s", d, firstLine(fails[i])))
		} else if found[i] {
			cs.Depends = append(cs.Depends, d)
		}
	}
	return cs
}
