package harness

import (
	"fmt"
	"maps"
	"slices"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
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
		d.Output = &OutputDiff{
			Offset:   off,
			LenA:     len(x.output),
			LenB:     len(y.output),
			DigestA:  a.OutputDigest,
			DigestB:  b.OutputDigest,
			ExcerptA: excerpt.Around(x.output, off, excerpt.Radius),
			ExcerptB: excerpt.Around(y.output, off, excerpt.Radius),
		}
	}
	if a.ChainDigest != b.ChainDigest {
		d.Event = events.Scan(x.tape, y.tape, rc.strip)
	}
	d.PinDiff = pinDiff(x.pin, y.pin)
	if ra, rb, ok := requestsDiffer(x.requests, y.requests); ok {
		d.RequestVaries = true
		d.RequestDiff = requestDiff(ra, rb, rc.Cassette.APIKey)
	}
	return d
}

// pinDiff lists the pins that differ between a and b, sorted by name.
func pinDiff(a, b map[string]string) []string {
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		va, oka := a[n]
		vb, okb := b[n]
		switch {
		case oka && okb && va != vb:
			out = append(out, fmt.Sprintf("%s: %q != %q", n, va, vb))
		case oka && !okb:
			out = append(out, fmt.Sprintf("%s: %q != (not pinned)", n, va))
		case !oka && okb:
			out = append(out, fmt.Sprintf("%s: (not pinned) != %q", n, vb))
		}
	}
	return out
}
