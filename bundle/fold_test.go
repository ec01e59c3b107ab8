package bundle

import (
	"fmt"

	"github.com/codegenie/codegenie/events"
)

// tallyFold is a test fold: it counts events by kind and chains their
// payload digests, so that it depends on every event and its order, and
// it snapshots faithfully (its JSON is all of its state).
type tallyFold struct {
	At      uint64         `json:"at"`
	Applied uint64         `json:"applied"`
	Kinds   map[string]int `json:"kinds"`
	Digest  events.Digest  `json:"digest"`
}

func newTally() *tallyFold { return &tallyFold{Kinds: map[string]int{}} }

func (f *tallyFold) FoldName() string { return "test/tally/1" }

func (f *tallyFold) Apply(e events.Event) error {
	if e.Seq < f.At {
		return fmt.Errorf("%w: seq %d after seq %d", errOrder, e.Seq, f.At)
	}
	f.At = e.Seq
	f.Applied++
	f.Kinds[string(e.Kind)]++
	f.Digest = events.Sum(append(f.Digest[:], e.PayloadDigest[:]...))
	return nil
}
