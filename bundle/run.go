package bundle

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/codegenie/codegenie/events"
)

// Run is one run of a scenario, as a bundle holds it.
type Run struct {
	// ID names the run in its bundle (for example "run-007"): not empty,
	// unique in the bundle; runs are kept sorted by ID.
	ID string
	// Pin holds what the run's outcome depends on, as named strings (for
	// example the versions and digests of its inputs). It may be nil.
	Pin map[string]string
	// Output is the run's output bytes (for example the diff it produced).
	Output []byte
	// Events is the run's tape.
	Events []events.Event
	// Error says why the run ended in an error; "" if it did not.
	Error string
}

// Bundle is a bundle in memory: what Write writes and Load returns.
type Bundle struct {
	Metadata Metadata
	Runs     []Run     // sorted by ID when read
	Snapshot *Snapshot // optional
}

// Run returns the run with the given ID, or nil.
func (b *Bundle) Run(id string) *Run {
	for i := range b.Runs {
		if b.Runs[i].ID == id {
			return &b.Runs[i]
		}
	}
	return nil
}

// sortedRuns returns the runs of b sorted by ID, refusing duplicates.
func sortedRuns(runs []Run) ([]Run, error) {
	out := slices.Clone(runs)
	slices.SortStableFunc(out, func(a, b Run) int { return cmp.Compare(a.ID, b.ID) })
	for i := 1; i < len(out); i++ {
		if out[i].ID == out[i-1].ID {
			return nil, wrapf(errMalformed, "two runs have the ID %q", out[i].ID)
		}
	}
	return out, nil
}

// checkRun checks what a writer needs of a run: its ID and pin, its
// output's size, and each event: what Event.Verify checks, the order
// rules and the size bounds.
func checkRun(r *Run) error {
	if err := checkRunInfos([]RunInfo{{ID: r.ID, Pin: r.Pin, Output: events.Sum(r.Output), OutputSize: int64(len(r.Output))}}); err != nil {
		return err
	}
	var o orderCheck
	for i, e := range r.Events {
		if err := o.next(e.Seq, e.Parent, []byte(e.Kind), []byte(e.Lane)); err != nil {
			return fmt.Errorf("run %q: record %d: %w", r.ID, i, err)
		}
		if err := e.Verify(); err != nil {
			return fmt.Errorf("run %q: record %d: %w: %v", r.ID, i, errDigest, err)
		}
		if len(e.Kind) > maxString || len(e.Lane) > maxString || len(e.AuditEventID) > maxString {
			return fmt.Errorf("run %q: record %d: %w: a string field is longer than %d bytes", r.ID, i, errTooLarge, maxString)
		}
		if len(e.Payload) > maxBlob {
			return fmt.Errorf("run %q: record %d: %w: payload of %d bytes, at most %d", r.ID, i, errTooLarge, len(e.Payload), maxBlob)
		}
	}
	return nil
}

// equalInfo reports whether two runs agree on everything but their
// events: ID, pin, output and error.
func equalInfo(a, b *Run) bool {
	return a.ID == b.ID && maps.Equal(a.Pin, b.Pin) && bytes.Equal(a.Output, b.Output) && a.Error == b.Error
}

// orderCheck enforces the ordering rules of one run: seqs start at 1 and
// are dense; equal seqs (lanes merged from several sources) are ordered by
// lane; a parent comes before its child; kinds are not empty.
type orderCheck struct {
	n    int
	seq  uint64
	lane []byte
}

func (o *orderCheck) next(seq, parent uint64, kind, lane []byte) error {
	switch {
	case len(kind) == 0:
		return wrapf(errRequired, "seq %d: empty kind", seq)
	case o.n == 0 && seq != 1:
		return wrapf(errOrder, "the first event has seq %d, want 1 (an event was dropped?)", seq)
	case o.n > 0 && seq == o.seq && bytes.Compare(lane, o.lane) <= 0:
		return wrapf(errOrder, "seq %d lane %q after seq %d lane %q: equal seqs must be in increasing lane order", seq, lane, o.seq, o.lane)
	case o.n > 0 && seq != o.seq && seq != o.seq+1:
		return wrapf(errOrder, "seq %d follows seq %d: seqs must be dense and increasing (an event was dropped or reordered)", seq, o.seq)
	case parent >= seq:
		return wrapf(errOrder, "seq %d: parent %d does not come before it", seq, parent)
	}
	o.n++
	o.seq = seq
	o.lane = append(o.lane[:0], lane...)
	return nil
}
