package bundle

import (
	"bytes"
	"fmt"
	"io/fs"

	"github.com/codegenie/codegenie/events"
)

// Prefetching: Next does not validate records itself. The first Next
// starts one goroutine that validates the records in order (Reader.step,
// exactly what Verify runs) and hands them over in batches; Next returns
// them one by one. The records, their order and the first error are the
// ones a sequential reader gives (there is one producer and it works in
// log order); only the time changes: validation, which is mostly hashing,
// runs while the caller works on the records before, so on a machine with
// a spare core a fold costs little more than decoding alone
// (package fallback's BenchmarkFold). Close stops the goroutine and
// waits for it.
//
// Memory stays bounded: a batch holds at most batchEvents records and
// about batchBytes of payloads (plus one large blob), and at most
// prefetchDepth batches wait in the channel.
const (
	batchEvents   = 256
	batchBytes    = 1 << 20
	prefetchDepth = 2
	arenaChunk    = 32 << 10 // the largest size class: no large-object allocation
)

// batch is a run of validated records; err follows them (io.EOF at the
// valid end of the log, or the first failure).
type batch struct {
	evs  []events.Event
	runs []int // the run index of each event
	err  error
}

type prefetcher struct {
	ch   chan *batch
	free chan *batch // batches the consumer is done with, for reuse
	stop chan struct{}
	cur  *batch
	pos  int
}

// arena hands out copies of payloads carved from shared chunks. A chunk's
// bytes are never written again once handed out, so every copy is owned
// by the caller; a copy is capped, so appending to it reallocates.
type arena struct{ buf []byte }

func (a *arena) copy(p []byte) []byte {
	if len(p) == 0 {
		return []byte{}
	}
	if len(p) > arenaChunk/4 {
		return bytes.Clone(p)
	}
	if cap(a.buf)-len(a.buf) < len(p) {
		a.buf = make([]byte, 0, arenaChunk)
	}
	n := len(a.buf)
	a.buf = append(a.buf, p...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// produce validates records into batches until the log ends, a check
// fails or Close asks it to stop. It is the only goroutine that touches the
// Reader's validation state while it runs; it sends its last batch and
// then only closes the channel, so what the consumer reads of the Reader
// after that batch (the last seq, the chain head) is final.
func (r *Reader) produce(p *prefetcher) {
	defer close(p.ch)
	var a arena
	for {
		var b *batch
		select {
		case b = <-p.free:
			b.evs, b.runs = b.evs[:0], b.runs[:0]
		default:
			b = &batch{evs: make([]events.Event, 0, batchEvents), runs: make([]int, 0, batchEvents)}
		}
		for size := 0; len(b.evs) < batchEvents && size < batchBytes; {
			if err := r.step(); err != nil {
				b.err = err
				break
			}
			e := r.event()
			if r.v.payload == nil { // inline: copy it out of the log buffer
				size += len(e.Payload)
				e.Payload = a.copy(e.Payload)
			} // a blob's bytes are the Reader's, never written again: shared
			b.evs = append(b.evs, e)
			b.runs = append(b.runs, r.v.run)
		}
		select {
		case p.ch <- b:
		case <-p.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// Next returns the next event, fully validated, and the index of its run
// in Runs; the runs come in the order of Runs, each run's events in log
// order. Payload must be treated as read-only: a payload stored as a blob
// is shared by every event that refers to that blob. At the end of a
// valid log it returns io.EOF; any other error is a *BundleError naming
// the file and record (or the context's cause), and is sticky. The first
// call starts the goroutine that validates ahead (see Reader); Close ends
// it.
func (r *Reader) Next() (int, events.Event, error) {
	if r.closed {
		return 0, events.Event{}, r.errClosed()
	}
	p := r.pre
	if p == nil {
		p = &prefetcher{ch: make(chan *batch, prefetchDepth), free: make(chan *batch, 1), stop: make(chan struct{})}
		r.pre = p
		go r.produce(p)
	}
	for p.cur == nil || p.pos == len(p.cur.evs) {
		if p.cur != nil {
			if p.cur.err != nil {
				return 0, events.Event{}, p.cur.err
			}
			select { // its events were cleared as they were returned
			case p.free <- p.cur:
			default:
			}
		}
		b, ok := <-p.ch
		if !ok { // only after Close, which Next refused above
			return 0, events.Event{}, r.errClosed()
		}
		p.cur, p.pos = b, 0
	}
	e, run := p.cur.evs[p.pos], p.cur.runs[p.pos]
	p.cur.evs[p.pos] = events.Event{}
	p.pos++
	r.consumed++
	return run, e, nil
}

// stopPrefetch stops the producer, if any, and waits until it has exited.
func (r *Reader) stopPrefetch() {
	if r.pre == nil {
		return
	}
	close(r.pre.stop)
	for range r.pre.ch {
	}
	r.pre = nil
}

func (r *Reader) errClosed() error {
	return r.fail("", -1, "read", fmt.Errorf("%w: the bundle reader is closed", fs.ErrClosed))
}
