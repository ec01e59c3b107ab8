package harness

import (
	"cmp"
	"slices"

	"github.com/codegenie/codegenie/events"
)

// Verdict is the gate's judgement over every run of a scenario. The
// ledger records the first three by name (ledger.Entry.Verdict).
type Verdict string

// The verdicts.
const (
	// Pass: one class, no error: every run gave the same outcome.
	Pass Verdict = "PASS"
	// Nondeterministic: more than one class, whatever mix of successes
	// and failures.
	Nondeterministic Verdict = "NONDETERMINISTIC"
	// Broken: one class whose runs all failed the same way: a
	// reproducible failure, not a flaky one.
	Broken Verdict = "BROKEN"
	// Skipped: the scenario was not run by this process (another shard's,
	// or not the one a child process was started for). It is not a
	// verdict the ledger records.
	Skipped Verdict = "SKIPPED"
)

// Class is a set of runs with the same outcome: the same pin key, output
// digest, chain digest and error kind, and for runs that missed the
// cassette misses that mean the same (the same changes from the
// recording, whichever requests carried them).
type Class struct {
	// Size is the number of runs in the class; FirstRun the lowest run
	// number among them.
	Size     int `json:"size"`
	FirstRun int `json:"first_run"`
	// Key is the digest of the runs' pins (see Key).
	Key          string        `json:"key,omitempty"`
	OutputDigest events.Digest `json:"output_digest"`
	ChainDigest  events.Digest `json:"chain_digest"`
	// Events is the tape length of the first run.
	Events int `json:"events"`
	// ErrorKind is "" for runs that succeeded, else one of the ErrorKind
	// constants; Error is the first run's error message.
	ErrorKind string `json:"error_kind,omitempty"`
	Error     string `json:"error,omitempty"`
	// InProcess counts the class's runs made in the test process; the
	// others were made in the child processes listed in Processes.
	InProcess int       `json:"in_process"`
	Processes []Process `json:"processes,omitempty"`
}

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
	Class
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
		c = &group{Class: Class{Key: k.key, OutputDigest: k.output, ChainDigest: k.chain, ErrorKind: k.errKind, FirstRun: o.iter}}
		g.classes[k] = c
	}
	c.Size++
	g.keep(c, o)
	if o.proc == nil {
		c.InProcess++
	} else {
		c.Processes = append(c.Processes, *o.proc)
	}
	if o.iter <= c.FirstRun {
		c.FirstRun, c.Events, c.Error = o.iter, len(o.tape), o.errText
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
		if v.first != nil && v.Size < c.Size && (victim == nil || v.Size < victim.Size || (v.Size == victim.Size && v.FirstRun > victim.FirstRun)) {
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
		slices.SortFunc(c.Processes, func(a, b Process) int { return cmp.Compare(a.Run, b.Run) })
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.FirstRun, b.FirstRun))
	})
	return out
}

// verdict judges classes (largest first).
func verdict(classes []*group) Verdict {
	switch {
	case len(classes) == 0:
		return ""
	case len(classes) > 1:
		return Nondeterministic
	case classes[0].ErrorKind != "":
		return Broken
	}
	return Pass
}
