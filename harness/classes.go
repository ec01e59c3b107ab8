package harness

import (
	"cmp"
	"slices"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
)

// classKey is the identity of a class. missed tells apart runs whose
// misses mean different changes (missedKey).
type classKey struct {
	key           string
	output, chain events.Digest
	errKind       string
	missed        events.Digest
}

// maxKept is the number of classes that keep one run in full (for the
// comparison and the evidence); the others keep their digests.
const maxKept = 16

// grouper folds runs into classes as they arrive, in any order.
type grouper struct {
	strip   events.Field
	key     string // masked in error texts (Config.Cassette.APIKey)
	classes map[classKey]*group
	kept    int // classes whose first is set
}

type group struct {
	gate.Class
	// procs are the child processes of the class's runs made in one.
	procs []Process
	// first is the class's run kept in full: its first run, unless the
	// class outgrew a kept class after maxKept classes had one, in which
	// case it is the run that made it grow.
	first *outcome
}

func newGrouper(strip events.Field) *grouper {
	return &grouper{strip: strip, classes: map[classKey]*group{}}
}

// keyOf returns the identity of o's class.
func (g *grouper) keyOf(o *outcome) classKey {
	return classKey{
		key:     Key(o.pin),
		output:  events.Sum(o.output),
		chain:   events.Chain(o.tape, g.strip),
		errKind: o.errKind,
		missed:  missedKey(o.requests),
	}
}

func (g *grouper) add(o *outcome) {
	o.errText = maskText(o.errText, g.key)
	k := g.keyOf(o)
	c, ok := g.classes[k]
	if !ok {
		c = &group{Class: gate.Class{Key: k.key, OutputDigest: k.output.String(), ChainDigest: k.chain.String(), ErrorKind: k.errKind, FirstRun: o.iter}}
		g.classes[k] = c
	}
	c.Runs++
	g.keep(c, o)
	if o.proc == nil {
		c.InProcess++
	} else {
		c.procs = append(c.procs, *o.proc)
	}
	if o.iter <= c.FirstRun {
		c.FirstRun, c.Events, c.Message = o.iter, len(o.tape), o.errText
		if c.first != nil {
			c.first = o
		}
	}
}

// keep gives c a run kept in full if it has none and either fewer than
// maxKept classes have one or c is now larger than the smallest class that
// has one (which loses it), so the largest classes always have one.
func (g *grouper) keep(c *group, o *outcome) {
	if c.first != nil {
		return
	}
	if g.kept < maxKept {
		c.first = o
		g.kept++
		return
	}
	var victim *group
	for _, v := range g.classes {
		if v.first != nil && v.Runs < c.Runs && (victim == nil || v.Runs < victim.Runs || (v.Runs == victim.Runs && v.FirstRun > victim.FirstRun)) {
			victim = v
		}
	}
	if victim != nil {
		victim.first, c.first = nil, o
	}
}

// result returns the classes, largest first (ties: lowest first run), with
// their processes ordered by run.
func (g *grouper) result() []*group {
	out := make([]*group, 0, len(g.classes))
	for _, c := range g.classes {
		slices.SortFunc(c.procs, func(a, b Process) int { return cmp.Compare(a.Run, b.Run) })
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.Runs, a.Runs), cmp.Compare(a.FirstRun, b.FirstRun))
	})
	return out
}

// verdict judges classes (largest first).
func verdict(classes []*group) gate.Verdict {
	switch {
	case len(classes) == 0:
		return ""
	case len(classes) > 1:
		return gate.Nondeterministic
	case classes[0].ErrorKind != "":
		return gate.Broken
	}
	return gate.Pass
}
