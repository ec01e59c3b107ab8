package bundle

import (
	"errors"
	"fmt"
	"io"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/eventrec"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/tape"
)

// validator is the state of the one pass over events.log that checks every
// record: framing and canonical encoding (internal/eventrec), size
// bounds, order, payload digest and chain hash, then each run's trailer
// against runs.json, then the end of the log.
type validator struct {
	log   *logReader
	end   func() error // the single-file form's checks after events.log
	run   int          // index of the current run in runs.json
	inRun uint64       // records of the current run read so far
	index int          // records read so far, over all runs
	chain eventrec.Chainer
	order orderCheck
	rec   eventrec.Record
	kinds eventrec.Interner
	// stored is the current stored record, header its header record (the
	// chained bytes), payload the blob bytes of a blob reference when kept.
	stored  []byte
	header  []byte
	hbuf    []byte
	payload []byte
	done    bool
	err     error
}

// head returns the chain head of the current run.
func (v *validator) head() events.Digest { return events.Digest(v.chain.Head()) }

// recordLimits are the bounds of a stored record's fields: an inline
// payload is shorter than blobThreshold (longer ones are blobs).
var recordLimits = eventrec.Limits{MaxString: maxString, MaxPayload: blobThreshold - 1}

// step validates the next record and leaves it in r.v. Its errors are
// sticky; io.EOF after the last record of the last run, once every
// end-of-log check has passed.
func (r *Reader) step() error {
	if r.v.err != nil {
		return r.v.err
	}
	if r.v.done {
		return io.EOF
	}
	err := r.advance()
	switch {
	case err == io.EOF:
		r.v.done = true
	case err != nil:
		r.v.err = err
	}
	return err
}

func (r *Reader) advance() error {
	v := &r.v
	for {
		if err := r.cancelled(); err != nil {
			return err
		}
		if v.run == len(r.hdr.runs) {
			if err := r.finish(); err != nil {
				return err
			}
			return io.EOF
		}
		stored, chain, err := v.log.frame()
		if err == io.EOF {
			if err := r.endRun(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return r.fail(eventsFile, v.index, "verify", err)
		}
		return r.record(stored, events.Digest(chain))
	}
}

// record validates one stored record of the current run.
func (r *Reader) record(stored []byte, chain events.Digest) error {
	v, idx := &r.v, r.v.index
	rr := &v.rec
	n, err := eventrec.Parse(stored, rr, recordLimits)
	switch {
	case errors.Is(err, eventrec.ErrLimit):
		return r.fail(eventsFile, idx, "verify", fmt.Errorf("%w: %v (payloads of %d bytes or more are stored as blobs)", errTooLarge, err, blobThreshold))
	case err != nil:
		return r.fail(eventsFile, idx, "verify", fmt.Errorf("%w: %v", errMalformed, err))
	case n != len(stored):
		return r.fail(eventsFile, idx, "verify", wrapf(errMalformed, "%d bytes after the record", len(stored)-n))
	}
	if err := v.order.next(rr.Seq, rr.Parent, rr.Kind, rr.Lane); err != nil {
		return r.fail(eventsFile, idx, "verify", r.inRun(err))
	}
	v.stored, v.payload, v.header = stored, nil, stored
	if err := r.payload(); err != nil {
		return err
	}
	if head := events.Digest(v.chain.AddRecord(v.header)); head != chain {
		return r.fail(eventsFile, idx, "verify", r.inRun(wrapf(errChain, "seq %d (%s): chain hash %s, computed %s: this record or one before it was edited, dropped or reordered",
			rr.Seq, excerpt.Quote(string(rr.Kind)), chain, head)))
	}
	v.index++
	v.inRun++
	return r.snapshotAt()
}

// payload checks the current record's payload: an inline one against its
// digest, a blob reference against the blob (kept when the reader hands
// payloads out, which counts against MaxPayloadBytes).
func (r *Reader) payload() error {
	v, idx := &r.v, r.v.index
	rr := &v.rec
	kind := func() string { return excerpt.Quote(string(rr.Kind)) } // for errors only
	switch {
	case rr.HeaderOnly() && rr.PayloadDigest != emptyDigest: // a blob
		var err error
		if r.keep {
			v.payload, err = r.blobs.get(rr.PayloadDigest)
		} else {
			err = r.blobs.check(rr.PayloadDigest)
		}
		if err != nil {
			return r.fail(blobName(rr.PayloadDigest), idx, "verify", r.inRun(fmt.Errorf("record seq %d (%s): %w", rr.Seq, kind(), err)))
		}
	case !rr.HeaderOnly():
		if d := events.Sum(rr.Payload); d != rr.PayloadDigest {
			return r.fail(eventsFile, idx, "verify", r.inRun(wrapf(errDigest, "seq %d (%s): payload digest %s does not match the payload (%s): the event was edited",
				rr.Seq, kind(), rr.PayloadDigest, d)))
		}
		v.hbuf = rr.AppendHeader(v.hbuf[:0], v.stored)
		v.header = v.hbuf
	}
	if !r.keep {
		return nil
	}
	n := int64(len(rr.Payload) + len(v.payload))
	if r.delivered += n; r.delivered > r.maxPayload {
		return r.fail(eventsFile, idx, "read", &LimitError{Limit: "MaxPayloadBytes", Value: r.maxPayload,
			What: fmt.Sprintf("the payloads of the events read so far total %d bytes", r.delivered)})
	}
	return nil
}

// snapshotAt checks the snapshot where it ends: its last seq and chain.
func (r *Reader) snapshotAt() error {
	s, v := r.hdr.snap, &r.v
	if s == nil || v.run != r.hdr.snapRun {
		return nil
	}
	switch {
	case v.inRun == s.Records && (v.rec.Seq != s.At || v.head() != s.Chain):
		return r.fail(snapshotFile, v.index-1, "verify", wrapf(errChain, "the snapshot claims seq %d and chain %s after %d records of run %q; the log has seq %d and chain %s",
			s.At, s.Chain, s.Records, s.Run, v.rec.Seq, v.head()))
	case v.inRun == s.Records+1 && v.rec.Seq <= s.At:
		return r.fail(snapshotFile, v.index-1, "verify", wrapf(errMalformed, "the snapshot at seq %d ends inside seq %d of run %q", s.At, v.rec.Seq, s.Run))
	}
	return nil
}

// inRun adds the current run to an error about one of its records.
func (r *Reader) inRun(err error) error {
	return fmt.Errorf("run %s: %w", excerpt.Quote(r.hdr.runs[r.v.run].ID), err)
}

// endRun checks the current run's trailer against what was read and
// runs.json, and moves to the next run.
func (r *Reader) endRun() error {
	v := &r.v
	info := r.hdr.runs[v.run]
	count, head, err := v.log.trailer()
	switch {
	case err != nil:
		return r.fail(eventsFile, v.index, "verify", r.inRun(err))
	case count != v.inRun:
		return r.fail(eventsFile, v.index, "verify", r.inRun(wrapf(errTruncated, "the trailer counts %d records, the log holds %d", count, v.inRun)))
	case head != v.head():
		return r.fail(eventsFile, v.index, "verify", r.inRun(wrapf(errChain, "trailer chain head %s, computed %s", head, v.head())))
	case count != info.Events || head != info.Chain:
		return r.fail(runsFile, -1, "verify", r.inRun(wrapf(errChain, "runs.json says %d events with chain %s, the log holds %d with chain %s",
			info.Events, info.Chain, count, head)))
	}
	v.run++
	v.inRun, v.chain, v.order = 0, eventrec.Chainer{}, orderCheck{}
	return nil
}

// finish runs the end-of-log checks.
func (r *Reader) finish() error {
	v := &r.v
	if err := v.log.atEnd(); err != nil {
		return r.fail(eventsFile, -1, "verify", err)
	}
	e, _ := r.hdr.manifest.file(eventsFile)
	if v.log.size != e.Size {
		return r.fail(eventsFile, -1, "verify", wrapf(errDigest, "size %d, the manifest says %d", v.log.size, e.Size))
	}
	if d := v.log.digest(); d != e.Digest {
		return r.fail(eventsFile, -1, "verify", wrapf(errDigest, "digest %s, the manifest says %s", d, e.Digest))
	}
	if v.end != nil {
		if err := v.end(); err != nil {
			return err
		}
	}
	// Blobs listed but never referenced are still checked.
	if r.form == formDir {
		for _, f := range r.hdr.manifest.Files {
			if d, ok := blobDigest(f.Path); ok {
				if err := r.blobs.check(d); err != nil {
					return r.fail(f.Path, -1, "verify", err)
				}
			}
		}
	}
	return nil
}

// event returns the current record as step parsed it (the record is parsed
// once); Payload aliases internal buffers or a kept blob.
func (r *Reader) event() events.Event {
	e := tape.Event(&r.v.rec, &r.v.kinds)
	if r.v.payload != nil {
		e.Payload = r.v.payload
	}
	return e
}
