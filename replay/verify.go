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
	Runs     []RunInfo     `json:"runs"`
	Events   uint64        `json:"events"` // over all runs
	Files    int           `json:"files"`
	Snapshot *Snapshot     `json:"snapshot,omitempty"`
}

// Verify checks every file and record of the bundle at path without
// keeping the events: manifest digests, each run's hash chain, ordering,
// required fields, blob names and sizes, outputs, the snapshot's place in
// its run (its state needs the fold that made it: ReplayTo). A bad bundle
// gives a *BundleError naming the file and the record.
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
		Path: path, Form: r.form, Digest: r.Digest(), Metadata: r.hdr.meta, Runs: r.hdr.runs,
		Events: uint64(r.v.index), Files: len(r.hdr.manifest.Files) + 1, Snapshot: r.hdr.snap,
	}
	return rep, nil
}

// Load reads and verifies the whole bundle at path into memory, with the
// default Options.
func Load(ctx context.Context, path string) (*Bundle, error) {
	return Options{}.Load(ctx, path)
}

// Load reads and verifies the whole bundle at path into memory. Payloads
// and outputs stored as blobs are shared by everything that refers to the
// same blob: treat them as read-only.
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
	b, err := readBundle(r)
	if err != nil {
		return nil, events.Digest{}, err
	}
	return b, r.Digest(), nil
}

// readBundle reads every run of an open Reader into memory.
func readBundle(r *Reader) (*Bundle, error) {
	infos := r.Runs()
	b := &Bundle{Metadata: r.hdr.meta, Snapshot: r.hdr.snap, Runs: make([]Run, len(infos))}
	for i, info := range infos {
		out, err := r.Output(i)
		if err != nil {
			return nil, err
		}
		b.Runs[i] = Run{ID: info.ID, Pin: info.Pin, Error: info.Error, Output: out, Events: make([]events.Event, 0, min(info.Events, 1<<20))}
	}
	for {
		run, e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		b.Runs[run].Events = append(b.Runs[run].Events, e)
	}
}
