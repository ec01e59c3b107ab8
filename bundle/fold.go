package bundle

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

// A Folder rebuilds the state of one run from its events: folding a run
// is applying its events, in log order, to a Folder. Apply folds in one
// event. The bundle package knows no pipeline: what the state is, and
// which payload fields it reads, is the Folder's business (package
// fallback has the fallback pipeline's; FoldTo has a generic one).
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

// Snapshot returns the snapshot of run r after every event with
// Seq <= at, as f, a fresh fold, computes it; at must be the Seq of an
// event of r.
func (r *Run) Snapshot(at uint64, f Folder) (*Snapshot, error) {
	n := 0
	for n < len(r.Events) && r.Events[n].Seq <= at {
		n++
	}
	if n == 0 || r.Events[n-1].Seq != at {
		return nil, wrapf(errRequired, "snapshot of run %s at seq %d: no event has that seq", excerpt.Quote(r.ID), at)
	}
	if err := fold(r.Events[:n], f, nil); err != nil {
		return nil, err
	}
	state, err := events.Canonical(f)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Run: r.ID, At: at, Records: uint64(n), Chain: events.Chain(r.Events[:n], 0), Fold: f.FoldName(), State: state}, nil
}

// Resume folds a run on from the snapshot: it sets f, a fresh fold,
// to the snapshot's state and then applies, in order, only the events of
// evs after it (Seq > s.At); evs may be the run's whole tape or just its
// tail. It reaches the state folding the whole tape reaches (a property
// test checks this for a fold that snapshots faithfully). It trusts the
// snapshot: Config.FoldTo checks a bundle's snapshot against its records.
func (s *Snapshot) Resume(evs []events.Event, f Folder) error {
	return fold(evs, f, s)
}

// fold applies evs in order to f, a fresh fold; with a snapshot, as
// Snapshot.Resume.
func fold(evs []events.Event, f Folder, snap *Snapshot) error {
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

// FoldTo streams the run ref names (the only run when ref.Run is "")
// through one fold, stopping after its last event with Seq <= at (at 0:
// after every event), and returns that fold, which then holds the run's
// state. It validates the whole bundle all the same, so a state is only
// reached from a bundle that verifies; at past the run's last event is
// an error.
//
// The fold is one of folds, chosen by name: the one whose FoldName is
// the fold of the bundle's snapshot of the run, else the first. With no
// folds it is the generic fold, which every tape supports and which
// knows no pipeline: for each event kind, in the order the kinds first
// appear, how many events had it and the seq, payload digest and payload
// of the last ("codegenie/bundle.kinds/1"; its state encodes to JSON).
// A bundle only names a fold; it never brings code, so FoldTo runs no
// code but the caller's folds and its own.
//
// When the bundle holds a snapshot of the run made by a fold of the
// chosen fold's name, FoldTo checks that the fold's state after the
// snapshot's records is the snapshot's state, so a snapshot cannot
// inject state.
func (c Config) FoldTo(ctx context.Context, ref RunRef, at uint64, folds ...Folder) (Folder, error) {
	r, err := c.Open(ctx, ref.Path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	run, err := r.runIndex(ref)
	if err != nil {
		return nil, err
	}
	f := r.chooseFold(run, folds)
	if err := r.foldRun(run, at, f); err != nil {
		return nil, err
	}
	return f, nil
}

// chooseFold returns the fold of folds named by the bundle's snapshot of
// run, else the first of folds, else a fresh generic fold.
func (r *Reader) chooseFold(run int, folds []Folder) Folder {
	if s := r.hdr.snap; s != nil && r.hdr.snapRun == run {
		for _, f := range folds {
			if f.FoldName() == s.Fold {
				return f
			}
		}
	}
	if len(folds) > 0 {
		return folds[0]
	}
	return &kindFold{Kinds: []kindState{}}
}

// foldRun applies the events of run with Seq <= at (at 0: all) to f.
func (r *Reader) foldRun(run int, at uint64, f Folder) error {
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
			return &BundleError{Path: r.path, File: eventsFile, Record: r.consumed - 1, Op: "fold", Err: err}
		}
		last = e.Seq
		if applied++; check != nil {
			if err := check(applied); err != nil {
				return err
			}
		}
	}
	if at != 0 && last < at {
		return &BundleError{Path: r.path, File: eventsFile, Record: -1, Op: "fold",
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
	return pickRun(ref, ids, "fold", func(first string) []string { return []string{"state", ref.Path, "-run", first} })
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
			return r.fail(snapshotFile, -1, "fold", err)
		}
		want, err := events.Canonical(s.State)
		if err != nil || !bytes.Equal(got, want) {
			return r.fail(snapshotFile, -1, "fold", wrapf(errDigest, "the snapshot's state differs from the state fold %s rebuilds from the first %d records of run %s: the snapshot was edited",
				excerpt.Quote(s.Fold), s.Records, excerpt.Quote(s.Run)))
		}
		return nil
	}
}
