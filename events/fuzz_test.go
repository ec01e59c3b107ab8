package events_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/codegenie/codegenie/events"
)

// FuzzDecodeRecord checks that the record decoder never panics and that
// anything it accepts re-encodes to exactly the bytes it consumed.
func FuzzDecodeRecord(f *testing.F) {
	e := events.Event{Seq: 2, Parent: 1, Kind: kindResponded, Lane: "x", Payload: []byte(`{"text":"ok"}`),
		EmittedAt: time.Unix(1700000000, 5).UTC(), AuditEventID: "a", BudgetTokenID: "b"}
	e.PayloadDigest = events.Sum(e.Payload)
	f.Add(events.AppendRecord(nil, e))
	f.Add(events.AppendRecord(nil, events.Event{Seq: 1, Kind: "k"}))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, n, err := events.DecodeRecord(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		re := events.AppendRecord(nil, got)
		if !bytes.Equal(re, b[:n]) {
			// Only non-minimal varints may differ; they must decode to the same event.
			again, m, err := events.DecodeRecord(re)
			if err != nil || m != len(re) || events.Chain([]events.Event{again}) != events.Chain([]events.Event{got}) {
				t.Fatalf("re-encoding is not stable: %x vs %x", re, b[:n])
			}
		}
	})
}
