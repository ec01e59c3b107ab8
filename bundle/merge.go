package bundle

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/jsondiff"
	"github.com/codegenie/codegenie/internal/tape"
)

// mergeBundles combines bundles of one scenario, for example the shards
// of a CI matrix, into one bundle, in an order that does not depend on the
// order of the inputs (the rules of Config.Merge):
//
//   - runs are ordered by their identity, the run ID; a run held by
//     several inputs is one run (duplicates by identity are dropped) whose
//     pin, output and error must be equal in every input, and whose events
//     are merged by mergeTapes, so the shards of one run merge too;
//   - the same identity with different bytes (a pin, an output, an error,
//     or an event at the same seq and lane) is an ErrConflict error naming
//     both sides, never a silent choice;
//   - the inputs must have equal metadata (ErrConflict otherwise);
//   - the merged bundle carries no snapshot (a snapshot belongs to the
//     bundle it was made for).
//
// It is idempotent: merging m with m gives m for a merged m, and merging
// the merge of x... with y gives the merge of x... and y. The inputs are
// not modified. paths, when not nil, are the files the bundles were read
// from, which the errors name along with the bundle diff command that
// compares the conflicting runs.
func mergeBundles(bundles []*Bundle, paths []string) (*Bundle, error) {
	if len(bundles) == 0 {
		return nil, wrapf(errMissing, "nothing to merge")
	}
	name := func(in int) string {
		if paths != nil {
			return hint.Quote(paths[in])
		}
		return fmt.Sprintf("input %d", in)
	}
	out := &Bundle{Metadata: bundles[0].Metadata}
	var all []copyOf
	for i, b := range bundles {
		if b.Metadata != out.Metadata {
			return nil, wrapf(ErrConflict, "the metadata of %s differs from that of %s: %s", name(i), name(0), strings.Join(jsondiff.PinLines(out.Metadata.fields(), b.Metadata.fields()), "; "))
		}
		for j := range b.Runs {
			all = append(all, copyOf{&b.Runs[j], i})
		}
	}
	slices.SortStableFunc(all, func(a, b copyOf) int { return cmp.Compare(a.ID, b.ID) })
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].ID == all[i].ID {
			j++
		}
		r, err := mergeRun(all[i:j], name, paths)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, r)
		i = j
	}
	return out, nil
}

// copyOf is a copy of a run held by input in.
type copyOf struct {
	*Run
	in int
}

// mergeRun merges the copies of one run; name names an input.
func mergeRun(copies []copyOf, name func(int) string, paths []string) (Run, error) {
	first := copies[0]
	// compare is the command that compares the run in inputs a and b.
	compare := func(a, b int) string {
		if paths == nil {
			return ""
		}
		return "; compare them with: " + hint.Tool("bundle", "diff", paths[a], paths[b], "-runs", first.ID+","+first.ID)
	}
	tapes := make([][]events.Event, len(copies))
	for i, c := range copies {
		if !equalInfo(first.Run, c.Run) {
			return Run{}, wrapf(ErrConflict, "run %s: %s and %s hold it with different %s%s",
				excerpt.Quote(first.ID), name(first.in), name(c.in), infoDiff(first.Run, c.Run), compare(first.in, c.in))
		}
		tapes[i] = c.Events
	}
	evs, err := mergeTapes(tapes...)
	var tc *tapeConflict
	if errors.As(err, &tc) {
		return Run{}, fmt.Errorf("run %s: %w: seq %d lane %q: event %d of %s (%s, payload %s) and event %d of %s (%s, payload %s) differ%s",
			excerpt.Quote(first.ID), ErrConflict, tc.seq, tc.lane, tc.a.idx, name(copies[tc.a.in].in), excerpt.Quote(string(tc.a.kind)), tc.a.digest,
			tc.b.idx, name(copies[tc.b.in].in), excerpt.Quote(string(tc.b.kind)), tc.b.digest, compare(copies[tc.a.in].in, copies[tc.b.in].in))
	}
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", excerpt.Quote(first.ID), err)
	}
	r := *first.Run
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
	return fmt.Sprintf("pins (%s)", strings.Join(jsondiff.PinLines(a.Pin, b.Pin), "; "))
}

// mergeTapes merges tapes of one run from several lanes or shards into
// one, following the same rules: events are sorted by Seq, ties broken by
// canonical identity, the Lane (an event's identity is (Seq, Lane), the
// position it claims in the run), then the canonical record bytes;
// identical duplicates (same canonical record bytes, every field included)
// are dropped; two events with the same identity and different bytes are
// an ErrConflict error naming both. mergeTapes is idempotent and does not
// depend on the order of its inputs, which it does not modify.
func mergeTapes(inputs ...[]events.Event) ([]events.Event, error) {
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
		return bytes.Compare(tape.AppendRecord(nil, a.e), tape.AppendRecord(nil, b.e))
	})
	out := make([]events.Event, 0, len(all))
	for i, k := range all {
		if i > 0 {
			p := all[i-1]
			if p.e.Seq == k.e.Seq && p.e.Lane == k.e.Lane {
				if bytes.Equal(tape.AppendRecord(nil, p.e), tape.AppendRecord(nil, k.e)) {
					continue
				}
				side := func(k keyed) tapeEvent { return tapeEvent{k.in, k.idx, k.e.Kind, k.e.PayloadDigest} }
				return nil, &tapeConflict{seq: k.e.Seq, lane: k.e.Lane, a: side(p), b: side(k)}
			}
		}
		out = append(out, k.e)
	}
	return out, nil
}

// tapeConflict: two events of one identity (seq, lane) differ. It wraps
// ErrConflict.
type tapeConflict struct {
	seq  uint64
	lane string
	a, b tapeEvent
}

// tapeEvent is event idx of input in.
type tapeEvent struct {
	in, idx int
	kind    events.Kind
	digest  events.Digest
}

func (e *tapeConflict) Error() string {
	return fmt.Sprintf("%v: seq %d lane %q: input %d event %d (%s, payload %s) and input %d event %d (%s, payload %s) differ",
		ErrConflict, e.seq, e.lane, e.a.in, e.a.idx, excerpt.Quote(string(e.a.kind)), e.a.digest, e.b.in, e.b.idx, excerpt.Quote(string(e.b.kind)), e.b.digest)
}

func (e *tapeConflict) Unwrap() error { return ErrConflict }
