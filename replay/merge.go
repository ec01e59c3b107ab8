package replay

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/pindiff"
)

// Merge combines bundles of one scenario, for example the shards of a CI
// matrix, into one bundle, in an order that does not depend on the order
// of the inputs:
//
//   - runs are ordered by their identity, the run ID; a run held by
//     several inputs is one run (duplicates by identity are dropped) whose
//     pin, output and error must be equal in every input, and whose events
//     are merged by MergeTapes, so the shards of one run merge too;
//   - the same identity with different bytes (a pin, an output, an error,
//     or an event at the same seq and lane) is an ErrConflict error naming
//     both sides, never a silent choice;
//   - the inputs must have equal metadata (ErrConflict otherwise);
//   - the merged bundle carries no snapshot (a snapshot belongs to the
//     bundle it was made for).
//
// Merge is idempotent: Merge(m, m) equals m for a merged m, and
// Merge(Merge(x...), y) equals Merge(x..., y). The inputs are not
// modified.
func Merge(bundles ...*Bundle) (*Bundle, error) {
	if len(bundles) == 0 {
		return nil, wrapf(ErrMissing, "nothing to merge")
	}
	out := &Bundle{Metadata: bundles[0].Metadata}
	var all []*Run
	for i, b := range bundles {
		if b.Metadata != out.Metadata {
			return nil, wrapf(ErrConflict, "input %d's metadata differs from input 0's: %s", i, strings.Join(pindiff.Lines(out.Metadata.fields(), b.Metadata.fields()), "; "))
		}
		for j := range b.Runs {
			all = append(all, &b.Runs[j])
		}
	}
	slices.SortStableFunc(all, func(a, b *Run) int { return cmp.Compare(a.ID, b.ID) })
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].ID == all[i].ID {
			j++
		}
		r, err := mergeRun(all[i:j])
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, r)
		i = j
	}
	return out, nil
}

// mergeRun merges the copies of one run.
func mergeRun(copies []*Run) (Run, error) {
	first := copies[0]
	tapes := make([][]events.Event, len(copies))
	for i, c := range copies {
		if !equalInfo(first, c) {
			return Run{}, wrapf(ErrConflict, "run %s: two inputs hold it with different %s; find which is wrong with: replay diff -runs",
				excerpt.Quote(first.ID), infoDiff(first, c))
		}
		tapes[i] = c.Events
	}
	evs, err := MergeTapes(tapes...)
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", excerpt.Quote(first.ID), err)
	}
	r := *first
	r.Events = evs
	return r, nil
}

// infoDiff names what differs between two copies of a run.
func infoDiff(a, b *Run) string {
	switch {
	case a.Error != b.Error:
		return fmt.Sprintf("errors (%s, %s)", excerpt.Quote(a.Error), excerpt.Quote(b.Error))
	case !bytes.Equal(a.Output, b.Output):
		return fmt.Sprintf("outputs (%s, %s)", events.Sum(a.Output), events.Sum(b.Output))
	}
	return fmt.Sprintf("pins (%s)", strings.Join(pindiff.Lines(a.Pin, b.Pin), "; "))
}

// MergeTapes merges tapes of one run from several lanes or shards into
// one, following the same rules: events are sorted by Seq, ties broken by
// canonical identity, the Lane (an event's identity is (Seq, Lane), the
// position it claims in the run), then the canonical record bytes;
// identical duplicates (same canonical record bytes, every field included)
// are dropped; two events with the same identity and different bytes are
// an ErrConflict error naming both. MergeTapes is idempotent and does not
// depend on the order of its inputs, which it does not modify.
func MergeTapes(inputs ...[]events.Event) ([]events.Event, error) {
	type keyed struct {
		e   events.Event
		in  int
		idx int
	}
	n := 0
	for _, evs := range inputs {
		n += len(evs)
	}
	all := make([]keyed, 0, n)
	for in, evs := range inputs {
		for i, e := range evs {
			all = append(all, keyed{e: e, in: in, idx: i})
		}
	}
	// The record bytes are encoded only to order and compare events of
	// one identity (rare), so memory stays that of the events.
	slices.SortStableFunc(all, func(a, b keyed) int {
		if c := cmp.Compare(a.e.Seq, b.e.Seq); c != 0 {
			return c
		}
		if c := strings.Compare(a.e.Lane, b.e.Lane); c != 0 {
			return c
		}
		return bytes.Compare(events.AppendRecord(nil, a.e), events.AppendRecord(nil, b.e))
	})
	out := make([]events.Event, 0, len(all))
	for i, k := range all {
		if i > 0 {
			p := all[i-1]
			if p.e.Seq == k.e.Seq && p.e.Lane == k.e.Lane {
				if bytes.Equal(events.AppendRecord(nil, p.e), events.AppendRecord(nil, k.e)) {
					continue
				}
				return nil, fmt.Errorf("%w: seq %d lane %s: input %d event %d (%s, payload %s) and input %d event %d (%s, payload %s) differ; find which source is wrong with: replay diff",
					ErrConflict, k.e.Seq, excerpt.Quote(k.e.Lane), p.in, p.idx, excerpt.Quote(string(p.e.Kind)), p.e.PayloadDigest, k.in, k.idx, excerpt.Quote(string(k.e.Kind)), k.e.PayloadDigest)
			}
		}
		out = append(out, k.e)
	}
	return out, nil
}
