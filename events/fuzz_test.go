package events_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/codegenie/codegenie/events"
)

// FuzzDecodeRecord checks the one record decoder: it never panics, every
// error wraps ErrCorruptRecord or ErrRecordLimit, and it accepts exactly
// the canonical encoding: what it accepts re-encodes to the bytes it
// consumed, and its view agrees with the event it returns.
func FuzzDecodeRecord(f *testing.F) {
	e := events.Event{Seq: 2, Parent: 1, Kind: kindResponded, Lane: "x", Payload: []byte(`{"text":"ok"}`),
		EmittedAt: time.Unix(1700000000, 5).UTC(), AuditEventID: "a"}
	e.PayloadDigest = events.Sum(e.Payload)
	f.Add(events.AppendRecord(nil, e))
	f.Add(events.AppendRecord(nil, events.Event{Seq: 1, Kind: "k"}))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0x81, 0x00, 0x00}) // a non-minimal varint
	f.Fuzz(func(t *testing.T, b []byte) {
		var r events.Record
		n, err := events.ParseRecord(b, &r, events.RecordLimits{MaxString: 64})
		if err != nil {
			if !errors.Is(err, events.ErrCorruptRecord) && !errors.Is(err, events.ErrRecordLimit) {
				t.Fatalf("error wraps neither ErrCorruptRecord nor ErrRecordLimit: %v", err)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		got := r.Event()
		if re := events.AppendRecord(nil, got); !bytes.Equal(re, b[:n]) {
			t.Fatalf("accepted a record that is not canonical: %x re-encodes to %x", b[:n], re)
		}
		if h := r.AppendHeader(nil, b[:n]); !bytes.Equal(h, events.AppendHeader(nil, got)) {
			t.Fatalf("header records differ")
		}
		var in events.Interner
		if r.EventInterned(&in).Kind != got.Kind {
			t.Fatalf("interned kind differs")
		}
	})
}
