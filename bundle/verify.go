package bundle

import (
	"cmp"
	"context"
	"errors"
	"io"
	"reflect"
	"slices"

	"github.com/codegenie/codegenie/events"
)

// VerifyReport is what Verify found in a valid bundle.
type VerifyReport struct {
	Path     string        `json:"path"`
	Form     string        `json:"form"`   // "directory" or "file"
	Digest   events.Digest `json:"digest"` // bundle digest: blake3 of manifest.json
	Metadata Metadata      `json:"metadata"`
	Runs     []RunInfo     `json:"runs"`
	Events   uint64        `json:"events"` // over all runs
	Files    int           `json:"files"`
	Snapshot *Snapshot     `json:"snapshot,omitempty"`
}

// Verify checks every file and record of the bundle at path without
// keeping the events: manifest digests, each run's hash chain, ordering,
// required fields, blob names and sizes, outputs, the snapshot's place in
// its run (its state needs the fold that made it: FoldTo). A bad bundle
// gives a *BundleError naming the file and the record. It holds no blob
// and hands out no payload, so the bounds of o do not limit it.
func (c Config) Verify(ctx context.Context, path string) (*VerifyReport, error) {
	r, err := open(ctx, path, false, c, c.newBudget())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		err := r.step()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	rep := &VerifyReport{
		Path: path, Form: r.form, Digest: r.Digest(), Metadata: r.hdr.meta, Runs: r.hdr.runs,
		Events: uint64(r.v.index), Files: len(r.hdr.manifest.Files) + 1, Snapshot: r.hdr.snap,
	}
	return rep, nil
}

// Load reads and verifies the whole bundle at path into memory. Payloads
// and outputs stored as blobs are shared by everything that refers to the
// same blob: treat them as read-only.
func (c Config) Load(ctx context.Context, path string) (*Bundle, error) {
	b, _, err := load(ctx, path, c, c.newBudget())
	return b, err
}

func load(ctx context.Context, path string, o Config, mem *budget) (*Bundle, events.Digest, error) {
	r, err := open(ctx, path, true, o, mem)
	if err != nil {
		return nil, events.Digest{}, err
	}
	defer r.Close()
	b, err := readBundle(r)
	if err != nil {
		return nil, events.Digest{}, err
	}
	return b, r.Digest(), nil
}

// readBundle reads every run of an open Reader into memory, counting what
// it holds against Config.MaxLoadedBytes.
func readBundle(r *Reader) (*Bundle, error) {
	mem := r.blobs.mem
	if err := mem.load(r.jsonSize()); err != nil {
		return nil, r.fail(runsFile, -1, "read", err)
	}
	infos := r.Runs()
	b := &Bundle{Metadata: r.hdr.meta, Snapshot: r.hdr.snap, Runs: make([]Run, len(infos))}
	for i, info := range infos {
		out, err := r.Output(i)
		if err != nil {
			return nil, err
		}
		b.Runs[i] = Run{ID: info.ID, Pin: info.Pin, Error: info.Error, Output: out}
	}
	for {
		run, e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		evs := b.Runs[run].Events
		if len(evs) > 0 { // share the strings repeated from the event before
			prev := &evs[len(evs)-1]
			e.Kind = cmp.Or(sameString(e.Kind, prev.Kind), e.Kind)
			e.Lane = cmp.Or(sameString(e.Lane, prev.Lane), e.Lane)
			e.AuditEventID = cmp.Or(sameString(e.AuditEventID, prev.AuditEventID), e.AuditEventID)
		}
		n := int64(len(e.Kind) + len(e.Lane) + len(e.AuditEventID))
		if len(e.Payload) < blobThreshold { // stored inline; blobs are counted as such
			n += int64(len(e.Payload))
		}
		if len(evs) == cap(evs) {
			evs = slices.Grow(evs, 1)
			n += int64(cap(evs)-len(evs)) * eventSize
		}
		if err := mem.load(n); err != nil {
			return nil, r.fail(eventsFile, r.consumed-1, "read", err)
		}
		b.Runs[run].Events = append(evs, e)
	}
}

// sameString returns b when it equals a, else the zero value.
func sameString[S ~string](a, b S) S {
	if a == b {
		return b
	}
	var zero S
	return zero
}

// eventSize is the memory of an events.Event without what it points to.
var eventSize = int64(reflect.TypeFor[events.Event]().Size())

// jsonSize is the size of the bundle's JSON files that a loaded bundle
// holds the strings of: manifest, metadata, runs and snapshot.
func (r *Reader) jsonSize() int64 {
	n := int64(len(r.hdr.manifestB))
	for _, f := range r.hdr.manifest.Files {
		switch f.Path {
		case metadataFile, runsFile, snapshotFile:
			n += f.Size
		}
	}
	return n
}

// Merge loads the bundles at paths, of one scenario (for example the
// shards of a CI matrix), within one set of bounds (all of them count
// against one MaxLoadedBytes and one MaxBufferedBlobs) and combines them
// into one bundle, in an order that does not depend on the order of the
// paths:
//
//   - runs are ordered by their identity, the run ID; a run held by
//     several inputs is one run (duplicates by identity are dropped) whose
//     pin, output and error must be equal in every input, and whose events
//     are merged record by record, so the shards of one run merge too;
//   - the same identity with different bytes (a pin, an output, an error,
//     or an event at the same seq and lane) is an [ErrConflict] error
//     naming both bundles and the bundle diff command that compares the
//     two runs, never a silent choice;
//   - the inputs must have equal metadata (ErrConflict otherwise);
//   - the merged bundle carries no snapshot (a snapshot belongs to the
//     bundle it was made for).
//
// Merge is idempotent: merging a merged bundle with itself gives it back,
// and merging the merge of x... with y gives the merge of x... and y.
func (c Config) Merge(ctx context.Context, paths ...string) (*Bundle, error) {
	mem := c.newBudget()
	bs := make([]*Bundle, len(paths))
	for i, p := range paths {
		var err error
		if bs[i], _, err = load(ctx, p, c, mem); err != nil {
			return nil, err
		}
	}
	return mergeBundles(bs, paths)
}
