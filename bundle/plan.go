package bundle

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"

	"lukechampine.com/blake3"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/eventrec"
	"github.com/codegenie/codegenie/internal/tape"
)

// plan is a bundle encoded up to events.log, whose bytes are produced on
// demand (twice: once to digest it, once to write it).
type plan struct {
	files    []planFile // sorted by name, events.log included
	manifest []byte
	runs     []Run // sorted by ID: events.log holds their records in this order
}

type planFile struct {
	name string
	data []byte // nil for events.log
	size int64
}

// writeLog writes events.log for runs and returns each run's chain head
// (events.Chain of its events).
func writeLog(w io.Writer, runs []Run) ([]events.Digest, error) {
	heads := make([]events.Digest, len(runs))
	buf := make([]byte, 0, 4096)
	header := make([]byte, 0, 256)
	full := make([]byte, 0, 4096)
	if _, err := io.WriteString(w, logMagic); err != nil {
		return nil, err
	}
	for i := range runs {
		var c eventrec.Chainer
		for _, e := range runs[i].Events {
			header = tape.AppendHeader(header[:0], e)
			head := c.AddRecord(header)
			stored := header
			if len(e.Payload) > 0 && len(e.Payload) < blobThreshold {
				full = tape.AppendRecord(full[:0], e)
				stored = full
			}
			buf = binary.AppendUvarint(buf[:0], uint64(len(stored)))
			buf = append(buf, stored...)
			buf = append(buf, head[:]...)
			if _, err := w.Write(buf); err != nil {
				return nil, err
			}
		}
		heads[i] = events.Digest(c.Head())
		buf = binary.AppendUvarint(buf[:0], 0)
		buf = binary.AppendUvarint(buf, uint64(len(runs[i].Events)))
		buf = append(buf, heads[i][:]...)
		if _, err := w.Write(buf); err != nil {
			return nil, err
		}
	}
	return heads, nil
}

type countHasher struct {
	h *blake3.Hasher
	n int64
}

func (c *countHasher) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.h.Write(b)
}

// makePlan checks b and encodes everything but events.log's bytes.
func makePlan(b *Bundle) (*plan, error) {
	meta := b.Metadata
	if meta.GoVersion == "" {
		meta.GoVersion = runtime.Version()
	}
	if err := meta.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", metadataFile, err)
	}
	runs, err := sortedRuns(b.Runs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runsFile, err)
	}
	blobs := map[events.Digest][]byte{}
	for i := range runs {
		r := &runs[i]
		if err := checkRun(r); err != nil {
			return nil, err
		}
		for _, e := range r.Events {
			if len(e.Payload) >= blobThreshold {
				blobs[e.PayloadDigest] = e.Payload
			}
		}
		if len(r.Output) > 0 {
			blobs[events.Sum(r.Output)] = r.Output
		}
	}
	if len(blobs)+5 > maxFiles {
		return nil, fmt.Errorf("%w: %d blobs, at most %d", errTooLarge, len(blobs), maxFiles-5)
	}
	p := &plan{runs: runs}
	metaB, err := events.Canonical(meta)
	if err != nil {
		return nil, err
	}
	p.files = append(p.files, planFile{name: metadataFile, data: metaB})
	if b.Snapshot != nil {
		if err := checkSnapshotOf(b.Snapshot, runs); err != nil {
			return nil, fmt.Errorf("%s: %w", snapshotFile, err)
		}
		snapB, err := events.Canonical(b.Snapshot)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", snapshotFile, err)
		}
		p.files = append(p.files, planFile{name: snapshotFile, data: snapB})
	}
	for d, data := range blobs {
		//detvet:ignore p.files is sorted by name in seal, which the next line calls
		p.files = append(p.files, planFile{name: blobName(d), data: data})
	}
	return p, p.seal()
}

// seal adds events.log and runs.json to p.files and encodes the manifest
// of every file.
func (p *plan) seal() error {
	ch := &countHasher{h: blake3.New(32, nil)}
	heads, err := writeLog(ch, p.runs)
	if err != nil {
		return err
	}
	infos := make([]RunInfo, len(p.runs))
	for i := range p.runs {
		r := &p.runs[i]
		infos[i] = RunInfo{ID: r.ID, Pin: r.Pin, Error: r.Error, Events: uint64(len(r.Events)), Chain: heads[i],
			Output: events.Sum(r.Output), OutputSize: int64(len(r.Output))}
	}
	runsB, err := events.Canonical(infos)
	if err != nil {
		return err
	}
	p.files = append(p.files, planFile{name: runsFile, data: runsB}, planFile{name: eventsFile, size: ch.n})
	slices.SortFunc(p.files, func(a, b planFile) int { return cmp.Compare(a.name, b.name) })
	m := bundleManifest{Format: bundleFormat}
	for i := range p.files {
		f := &p.files[i]
		d := events.Digest(ch.h.Sum(nil))
		if f.data != nil {
			f.size = int64(len(f.data))
			d = events.Sum(f.data)
		}
		m.Files = append(m.Files, fileEntry{Path: f.name, Size: f.size, Digest: d})
	}
	p.manifest, err = m.encode()
	return err
}

// checkSnapshotOf checks that a snapshot fits the run it names: its
// records, last seq and chain head (its state is the fold's business:
// Run.Snapshot, FoldTo).
func checkSnapshotOf(s *Snapshot, runs []Run) error {
	i, ok := slices.BinarySearchFunc(runs, s.Run, func(r Run, id string) int { return cmp.Compare(r.ID, id) })
	if !ok {
		return wrapf(errMissing, "the snapshot is of run %q, which the bundle does not hold", s.Run)
	}
	evs := runs[i].Events
	n := s.Records
	switch {
	case n == 0 || n > uint64(len(evs)):
		return wrapf(errMalformed, "the snapshot covers %d records of run %q, which has %d", n, s.Run, len(evs))
	case evs[n-1].Seq != s.At || (n < uint64(len(evs)) && evs[n].Seq <= s.At):
		return wrapf(errMalformed, "the snapshot at seq %d does not end after record %d of run %q (build it with Run.Snapshot)", s.At, n, s.Run)
	case events.Chain(evs[:n], 0) != s.Chain:
		return wrapf(errChain, "the snapshot's chain %s is not the chain of the first %d records of run %q", s.Chain, n, s.Run)
	}
	return nil
}
