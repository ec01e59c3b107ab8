package harness

import (
	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// compare builds the comparison of the kept runs (normally the first) of
// the two largest classes a and b (classes 1 and 2).
func compare(rc *resolved, a, b *group) *Divergence {
	d := &Divergence{ClassA: 1, ClassB: 2, RunA: a.FirstRun, RunB: b.FirstRun}
	if a.first == nil || b.first == nil {
		return d
	}
	x, y := a.first, b.first
	d.RunA, d.RunB = x.iter, y.iter
	if a.OutputDigest != b.OutputDigest {
		off, _ := excerpt.FirstDiff(x.output, y.output)
		d.Output = &bundle.OutputDiff{
			Offset:   off,
			LenA:     len(x.output),
			LenB:     len(y.output),
			DigestA:  events.Sum(x.output),
			DigestB:  events.Sum(y.output),
			ExcerptA: excerpt.Around(x.output, off, excerpt.Radius),
			ExcerptB: excerpt.Around(y.output, off, excerpt.Radius),
		}
	}
	if a.ChainDigest != b.ChainDigest {
		d.Event = events.Compare(x.tape, y.tape, rc.strip)
	}
	d.PinDiff = jsondiff.PinLines(x.pin, y.pin)
	if ra, rb, ok := requestsDiffer(x.requests, y.requests); ok {
		d.RequestVaries = true
		d.RequestDiff = requestDiff(ra, rb, rc.Cassette.APIKey)
	}
	return d
}
