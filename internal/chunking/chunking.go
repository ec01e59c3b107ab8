package chunking

import (
	"context"
	"fmt"
	"math"
)

// Kind is how a plan cuts a body into Reads.
type Kind uint8

// The kinds, in the order ForRun gives them to runs 1, 2, 3, ...
const (
	// AsRecorded, the zero Kind, leaves the cuts to the replay: one frame
	// of an event stream, or the whole body, per Read.
	AsRecorded Kind = iota
	// Split ends Reads after 1 to 32 bytes, mid-frame and mid-line.
	Split
	// Joined fills each Read with up to 256 to 8192 bytes: every frame
	// already due, often several, the last one cut where the size ends.
	Joined
	// Bytes returns one byte per Read.
	Bytes
	// Mixed draws each Read's cut from all of the above.
	Mixed
)

var kindNames = [...]string{
	AsRecorded: "as recorded",
	Split:      "split mid-frame",
	Joined:     "frames joined",
	Bytes:      "single bytes",
	Mixed:      "mixed",
}

// String names k as reports print it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Plan is how the bodies of one run are cut. The zero Plan is AsRecorded.
type Plan struct {
	Kind Kind
	// Seed draws the cut sizes; ForRun derives it from the run number.
	Seed uint64
}

// String renders p as reports print it.
func (p Plan) String() string { return p.Kind.String() }

// cycle is the order of kinds of runs 1, 2, 3, ...: every kind within
// any five consecutive runs, as recorded included.
var cycle = [...]Kind{Split, Joined, Bytes, Mixed, AsRecorded}

// ForRun returns the plan of run: as recorded for run 0 (the reference
// every other run is compared with), then the kinds in turn, each with a
// seed derived from run alone.
func ForRun(run int) Plan {
	if run <= 0 {
		return Plan{}
	}
	return Plan{Kind: cycle[(run-1)%len(cycle)], Seed: mix(uint64(run))}
}

// Step is one Read of a plan: at most Max bytes; with Join, continue past
// the end of a frame into the next ones as long as they are already due.
type Step struct {
	Max  int
	Join bool
}

// Cutter draws the Steps of one body.
type Cutter struct {
	kind  Kind
	state uint64
}

// Cutter returns the cutter of the body of the body-th recorded
// interaction (its index in the cassette, so concurrent requests do not
// change each other's cuts), or nil for AsRecorded.
func (p Plan) Cutter(body int) *Cutter {
	if p.Kind == AsRecorded {
		return nil
	}
	return &Cutter{kind: p.Kind, state: mix(p.Seed ^ mix(uint64(body)+1))}
}

// whole is the Max of a Read the plan does not cut.
const whole = math.MaxInt

// Next returns the next Step.
func (c *Cutter) Next() Step {
	k := c.kind
	if k == Mixed {
		k = [...]Kind{AsRecorded, Split, Joined, Bytes}[c.draw(4)]
	}
	switch k {
	case Split:
		return Step{Max: 1 + c.draw(32)}
	case Joined:
		return Step{Max: 256 + c.draw(8192-256+1), Join: true}
	case Bytes:
		return Step{Max: 1}
	}
	return Step{Max: whole}
}

// draw returns a number in [0, n).
func (c *Cutter) draw(n int) int {
	c.state += 0x9e3779b97f4a7c15
	return int(mix(c.state) % uint64(n))
}

// mix is splitmix64's finaliser: a bijection that spreads every input bit.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

type ctxKey struct{}

// With returns ctx carrying p: responses replayed for a request with this
// context are cut by p.
func With(ctx context.Context, p Plan) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the plan ctx carries, AsRecorded when none.
func From(ctx context.Context) Plan {
	p, _ := ctx.Value(ctxKey{}).(Plan)
	return p
}
