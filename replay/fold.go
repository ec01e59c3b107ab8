package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// A Folder rebuilds the state of one run from its events: the caller's
// part of replay. Apply folds in one event; events come in log order. The
// replay package knows no pipeline: what the state is, and which payload
// fields it reads, is the Folder's business (package fallback has the
// fallback pipeline's).
//
// A snapshot holds a Folder's state: the Folder's value encoded with
// encoding/json, decoded back into a fresh Folder of the same kind.
// FoldName names the fold and the format of that state (change it when
// the state's JSON changes), so that a snapshot is only ever read back by
// the fold that made it.
type Folder interface {
	Apply(e events.Event) error
	FoldName() string
}

// MakeSnapshot returns the snapshot of run r after every event with
// Seq <= at, as f, a fresh fold, computes it; at must be the Seq of an
// event of r.
func MakeSnapshot(r *Run, at uint64, f Folder) (*Snapshot, error) {
	n := 0
	for n < len(r.Events) && r.Events[n].Seq <= at {
		n++
	}
	if n == 0 || r.Events[n-1].Seq != at {
		return nil, wrapf(errRequired, "snapshot of run %s at seq %d: no event has that seq", excerpt.Quote(r.ID), at)
	}
	if err := Reconstruct(r.Events[:n], f, nil); err != nil {
		return nil, err
	}
	state, err := events.Canonical(f)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Run: r.ID, At: at, Records: uint64(n), Chain: events.Chain(r.Events[:n], 0), Fold: f.FoldName(), State: state}, nil
}

// Reconstruct applies evs in order to f, a fresh fold. With a snapshot
// it is partial replay: it first sets f to the snapshot's state and then
// applies only the events of evs after it (Seq > snap.At); evs may be the
// run's whole tape or just its tail. It reaches the state a replay of the
// whole tape reaches (a property test checks this for a fold that
// snapshots faithfully). It trusts the snapshot: Options.ReplayTo checks a
// bundle's snapshot against its records.
func Reconstruct(evs []events.Event, f Folder, snap *Snapshot) error {
	var at uint64
	if snap != nil {
		if snap.Fold != f.FoldName() {
			return wrapf(errMalformed, "the snapshot holds the state of fold %s, not of %s", excerpt.Quote(snap.Fold), excerpt.Quote(f.FoldName()))
		}
		if err := json.Unmarshal(snap.State, f); err != nil {
			return wrapf(errMalformed, "the snapshot's state does not decode into fold %s: %v", excerpt.Quote(f.FoldName()), err)
		}
		at = snap.At
	}
	for i, e := range evs {
		if e.Seq <= at {
			continue
		}
		if err := f.Apply(e); err != nil {
			return fmt.Errorf("event %d (seq %d): %w", i, e.Seq, err)
		}
	}
	return nil
}

// ReplayTo streams the run ref names (the only run when ref.Run is "")
// through f, stopping after its last event with Seq <= at (at 0: after
// every event). It validates the whole bundle all the same, so a state is
// only reached from a bundle that verifies; at past the run's last event
// is an error. When the bundle holds a snapshot of the run made by a fold
// of f's name, ReplayTo checks that f's state after the
// snapshot's records is the snapshot's state, so a snapshot cannot inject
// state.
func (o Options) ReplayTo(ctx context.Context, ref RunRef, at uint64, f Folder) error {
	r, err := o.Open(ctx, ref.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	run, err := r.runIndex(ref)
	if err != nil {
		return err
	}
	check := r.snapshotCheck(run, f)
	last := uint64(0)
	for applied := uint64(0); ; {
		i, e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if i != run || (at != 0 && e.Seq > at) {
			continue
		}
		if err := f.Apply(e); err != nil {
			return &BundleError{Path: ref.Path, File: eventsFile, Record: r.consumed - 1, Op: "replay", Err: err}
		}
		last = e.Seq
		if applied++; check != nil {
			if err := check(applied); err != nil {
				return err
			}
		}
	}
	if at != 0 && last < at {
		return &BundleError{Path: ref.Path, File: eventsFile, Record: -1, Op: "replay",
			Err: wrapf(errRequired, "seq %d is past the last event of run %s (seq %d)", at, excerpt.Quote(r.hdr.runs[run].ID), last)}
	}
	return nil
}

// runIndex returns the index of the run ref names.
func (r *Reader) runIndex(ref RunRef) (int, error) {
	ids := make([]string, len(r.hdr.runs))
	for i, info := range r.hdr.runs {
		ids[i] = info.ID
	}
	return pickRun(ref, ids, "replay", func(first string) []string { return []string{"state", ref.Path, "-run", first} })
}

// snapshotCheck returns the check of the bundle's snapshot against f after
// each applied event, or nil when there is nothing to check.
func (r *Reader) snapshotCheck(run int, f Folder) func(applied uint64) error {
	s := r.hdr.snap
	if s == nil || r.hdr.snapRun != run || f.FoldName() != s.Fold {
		return nil
	}
	return func(applied uint64) error {
		if applied != s.Records {
			return nil
		}
		got, err := events.Canonical(f)
		if err != nil {
			return r.fail(snapshotFile, -1, "replay", err)
		}
		want, err := events.Canonical(s.State)
		if err != nil || !bytes.Equal(got, want) {
			return r.fail(snapshotFile, -1, "replay", wrapf(errDigest, "the snapshot's state differs from the state fold %s rebuilds from the first %d records of run %s: the snapshot was edited",
				excerpt.Quote(s.Fold), s.Records, excerpt.Quote(s.Run)))
		}
		return nil
	}
}
