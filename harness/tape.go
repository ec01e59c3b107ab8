package harness

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/codegenie/codegenie/events"
)

// ErrCorruptTape is wrapped by ReadTape errors.
var ErrCorruptTape = errors.New("corrupt tape file")

// TapeError locates a ReadTape failure.
type TapeError struct {
	Record int // 0-based index of the record that failed
	Offset int // byte offset of that record
	Err    error
}

func (e *TapeError) Error() string {
	return fmt.Sprintf("tape record %d at byte %d: %v", e.Record, e.Offset, e.Err)
}

func (e *TapeError) Unwrap() error { return e.Err }

// AppendTape appends the tape encoding of evs to dst: the canonical binary
// records of events.AppendRecord, back to back, fields exactly as recorded
// (nothing stripped). Child processes send their tapes in it.
func AppendTape(dst []byte, evs []events.Event) []byte {
	for _, e := range evs {
		dst = events.AppendRecord(dst, e)
	}
	return dst
}

// ReadTape decodes a tape written by AppendTape and checks each event on
// its own (events.Event.Verify).
func ReadTape(b []byte) ([]events.Event, error) {
	var evs []events.Event
	for off := 0; off < len(b); {
		e, n, err := events.DecodeRecord(b[off:])
		if err == nil {
			err = e.Verify()
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrCorruptTape, err)
			}
		}
		if err != nil {
			return nil, &TapeError{Record: len(evs), Offset: off, Err: err}
		}
		e.Payload = bytes.Clone(e.Payload)
		evs = append(evs, e)
		off += n
	}
	return evs, nil
}
