package tape

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/eventrec"
)

// AppendRecord appends the record of e to dst.
func AppendRecord(dst []byte, e events.Event) []byte {
	f := fields(e)
	return eventrec.Append(dst, &f)
}

// AppendHeader appends the header record of e (its record with an empty
// payload, what the chain hashes) to dst.
func AppendHeader(dst []byte, e events.Event) []byte {
	f := fields(e)
	return eventrec.AppendHeader(dst, &f)
}

func fields(e events.Event) eventrec.Fields {
	return eventrec.Fields{
		Seq: e.Seq, Parent: e.Parent, Kind: string(e.Kind), Lane: e.Lane, Payload: e.Payload,
		PayloadDigest: e.PayloadDigest, EmittedAt: e.EmittedAt, AuditEventID: e.AuditEventID,
	}
}

// Event returns the event r holds, its kind taken from in so that decoding
// a long tape allocates each distinct kind once. Payload aliases the
// record; the strings are copies.
func Event(r *eventrec.Record, in *eventrec.Interner) events.Event {
	return events.Event{
		Seq: r.Seq, Parent: r.Parent, Kind: events.Kind(in.Kind(r.Kind)), Lane: string(r.Lane),
		Payload: r.Payload, PayloadDigest: r.PayloadDigest, EmittedAt: r.Time(),
		AuditEventID: string(r.AuditEventID),
	}
}

// ErrCorrupt is wrapped by Read errors.
var ErrCorrupt = errors.New("corrupt tape file")

// Error locates a Read failure.
type Error struct {
	Record int // 0-based index of the record that failed
	Offset int // byte offset of that record
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("tape record %d at byte %d: %v", e.Record, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Append appends the tape of evs to dst.
func Append(dst []byte, evs []events.Event) []byte {
	for _, e := range evs {
		dst = AppendRecord(dst, e)
	}
	return dst
}

// Read decodes a tape written by Append and checks each event on its own
// (events.Event.Verify). The events own their payloads.
func Read(b []byte) ([]events.Event, error) {
	var (
		evs []events.Event
		r   eventrec.Record
		in  eventrec.Interner
	)
	for off := 0; off < len(b); {
		n, err := eventrec.Parse(b[off:], &r, eventrec.Limits{})
		var e events.Event
		if err == nil {
			e = Event(&r, &in)
			if err = e.Verify(); err != nil {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
		}
		if err != nil {
			return nil, &Error{Record: len(evs), Offset: off, Err: err}
		}
		e.Payload = bytes.Clone(e.Payload)
		evs = append(evs, e)
		off += n
	}
	return evs, nil
}
