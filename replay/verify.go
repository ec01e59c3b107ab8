package replay

import (
	"context"
	"errors"
	"io"

	"github.com/codegenie/codegenie/events"
)

// VerifyReport is what Verify found in a valid bundle.
type VerifyReport struct {
	Path     string        `json:"path"`
	Form     Form          `json:"form"`
	Digest   events.Digest `json:"digest"` // bundle digest: blake3 of manifest.json
	Metadata Metadata      `json:"metadata"`
	Events   uint64        `json:"events"`
	LastSeq  uint64        `json:"last_seq"`
	Chain    events.Digest `json:"chain"`
	Files    int           `json:"files"`
	Snapshot *uint64       `json:"snapshot_at,omitempty"`
}

// Verify checks every file and record of the bundle at path without
// keeping the events: manifest digests, hash chain, ordering, required
// fields, blob names and sizes, the snapshot. A bad bundle gives a
// *BundleError naming the file and the record; a FAILED one wraps
// ErrReplayUnavailable.
func Verify(ctx context.Context, path string) (*VerifyReport, error) {
	r, err := open(ctx, path, false, Options{}, Options{}.newBudget())
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
		Path: path, Form: r.form, Digest: r.Digest(), Metadata: r.meta,
		Events: r.manifest.Events, LastSeq: r.order.seq, Chain: r.chain.Head(),
		Files: len(r.manifest.Files) + 1,
	}
	if r.snap != nil {
		at := r.snap.At
		rep.Snapshot = &at
	}
	return rep, nil
}

// Load reads and verifies the whole bundle at path into memory, with the
// default Options.
func Load(ctx context.Context, path string) (*Bundle, error) {
	return Options{}.Load(ctx, path)
}

// Load reads and verifies the whole bundle at path into memory. Payloads
// stored as blobs are shared by the events that refer to the same blob:
// treat payloads as read-only.
func (o Options) Load(ctx context.Context, path string) (*Bundle, error) {
	b, _, err := load(ctx, path, o, o.newBudget())
	return b, err
}

func load(ctx context.Context, path string, o Options, mem *budget) (*Bundle, events.Digest, error) {
	r, err := open(ctx, path, true, o, mem)
	if err != nil {
		return nil, events.Digest{}, err
	}
	defer r.Close()
	b := &Bundle{Metadata: r.meta, Snapshot: r.snap, Events: make([]events.Event, 0, min(r.manifest.Events, 1<<20))}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return b, r.Digest(), nil
		}
		if err != nil {
			return nil, events.Digest{}, err
		}
		b.Events = append(b.Events, e)
	}
}
