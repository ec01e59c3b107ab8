package tape_test

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/eventrec"
	"github.com/codegenie/codegenie/internal/tape"
	"github.com/codegenie/codegenie/internal/tapetest"
)

// decode parses the one record at the front of b.
func decode(b []byte) (events.Event, int, error) {
	var r eventrec.Record
	var in eventrec.Interner
	n, err := eventrec.Parse(b, &r, eventrec.Limits{})
	if err != nil {
		return events.Event{}, 0, err
	}
	return tape.Event(&r, &in), n, nil
}

func TestRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := tapetest.Event.Draw(t, "event")
		rec := tape.AppendRecord([]byte("prefix"), e)
		got, n, err := decode(rec[len("prefix"):])
		require.NoError(t, err)
		require.Equal(t, len(rec)-len("prefix"), n)
		if len(e.Payload) == 0 {
			e.Payload = got.Payload // nil vs empty
		}
		require.Equal(t, e, got)
		require.NoError(t, got.Verify())
	})
}

func TestTapeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := rapid.SliceOfN(tapetest.Event, 0, 6).Draw(t, "events")
		b := tape.Append(nil, evs)
		got, err := tape.Read(b)
		require.NoError(t, err)
		require.Len(t, got, len(evs))
		for i := range evs {
			if len(evs[i].Payload) == 0 {
				evs[i].Payload = got[i].Payload // nil vs empty
			}
			require.Equal(t, evs[i], got[i])
		}
	})
}

func TestRecordTruncated(t *testing.T) {
	e := events.Event{Seq: 3, Parent: 1, Kind: "request.built", Payload: []byte(`{"a":1}`)}
	e.PayloadDigest = events.Sum(e.Payload)
	rec := tape.AppendRecord(nil, e)
	for i := range len(rec) {
		_, _, err := decode(rec[:i])
		require.ErrorIs(t, err, eventrec.ErrCorrupt, "prefix of %d bytes", i)
	}
}

func TestRecordEmittedAtExtremes(t *testing.T) {
	for _, ns := range []int64{math.MinInt64, -1, 0, 1, math.MaxInt64} {
		e := events.Event{Seq: 1, Kind: "job.started", EmittedAt: time.Unix(0, ns).UTC()}
		got, _, err := decode(tape.AppendRecord(nil, e))
		require.NoError(t, err)
		require.True(t, e.EmittedAt.Equal(got.EmittedAt), "UnixNano %d: got %v", ns, got.EmittedAt)
	}
}

// TestParseIsStrict: a record that decodes to the right values but is not
// in the canonical encoding is refused, naming the field.
func TestParseIsStrict(t *testing.T) {
	good := tape.AppendRecord(nil, events.Event{Seq: 1, Kind: "k", PayloadDigest: events.Sum(nil)})
	nonMinimalSeq := append([]byte{0x81, 0x00}, good[1:]...)
	badFlag := bytes.Clone(good)
	badFlag[len(badFlag)-2] = 2 // the emitted flag
	for _, tc := range []struct {
		name, field string
		rec         []byte
	}{
		{"non-minimal varint", "seq", nonMinimalSeq},
		{"emitted flag", "emitted", badFlag},
		{"truncated", "audit", good[:len(good)-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decode(tc.rec)
			require.ErrorIs(t, err, eventrec.ErrCorrupt)
			require.Contains(t, err.Error(), "field "+tc.field)
		})
	}
	var r eventrec.Record
	long := tape.AppendRecord(nil, events.Event{Seq: 1, Kind: "a-long-kind"})
	_, err := eventrec.Parse(long, &r, eventrec.Limits{MaxString: 4})
	require.ErrorIs(t, err, eventrec.ErrLimit)
	require.Contains(t, err.Error(), "field kind")
}

// TestRecordHeader: the header record is the record with the payload
// elided, the same from an event and from a parsed record, and the chain
// of events.Chain folds exactly these header records.
func TestRecordHeader(t *testing.T) {
	e := events.Event{Seq: 4, Parent: 2, Kind: "k", Lane: "l", Payload: []byte(`{"a":1}`), AuditEventID: "id",
		EmittedAt: time.Unix(3, 4).UTC()}
	e.PayloadDigest = events.Sum(e.Payload)
	rec := tape.AppendRecord(nil, e)
	var r eventrec.Record
	n, err := eventrec.Parse(rec, &r, eventrec.Limits{})
	require.NoError(t, err)
	require.Equal(t, len(rec), n)
	noPayload := e
	noPayload.Payload = nil
	require.Equal(t, tape.AppendRecord(nil, noPayload), tape.AppendHeader(nil, e))
	require.Equal(t, tape.AppendHeader(nil, e), r.AppendHeader(nil, rec))
	require.False(t, r.HeaderOnly())
	var c eventrec.Chainer
	c.AddRecord(tape.AppendHeader(nil, e))
	require.Equal(t, events.Chain([]events.Event{e}, 0), events.Digest(c.Head()))
}

func TestReadErrors(t *testing.T) {
	e := events.Event{Seq: 1, Kind: "job.started", Payload: []byte(`{}`)}
	e.PayloadDigest = events.Sum(e.Payload)
	good := tape.Append(nil, []events.Event{e, {Seq: 2, Parent: 1, Kind: "text.composed", Payload: []byte(`1`), PayloadDigest: events.Sum([]byte(`1`))}})
	evs, err := tape.Read(good)
	require.NoError(t, err)
	require.Len(t, evs, 2)

	_, err = tape.Read(good[:len(good)-3])
	var te *tape.Error
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, te.Record)
	require.ErrorIs(t, err, eventrec.ErrCorrupt)

	bad := tape.Append(nil, []events.Event{{Seq: 1, Kind: "job.started", Payload: []byte(`{}`)}})
	_, err = tape.Read(bad)
	require.ErrorIs(t, err, tape.ErrCorrupt)
	require.ErrorContains(t, err, "payload digest")
}

// FuzzParse checks the one record decoder: it never panics, every error
// wraps ErrCorrupt or ErrLimit, and it accepts exactly the canonical
// encoding: what it accepts re-encodes to the bytes it consumed, and its
// header agrees with the event's.
func FuzzParse(f *testing.F) {
	e := events.Event{Seq: 2, Parent: 1, Kind: "call.responded", Lane: "x", Payload: []byte(`{"text":"ok"}`),
		EmittedAt: time.Unix(1700000000, 5).UTC(), AuditEventID: "a"}
	e.PayloadDigest = events.Sum(e.Payload)
	f.Add(tape.AppendRecord(nil, e))
	f.Add(tape.AppendRecord(nil, events.Event{Seq: 1, Kind: "k"}))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0x81, 0x00, 0x00}) // a non-minimal varint
	f.Fuzz(func(t *testing.T, b []byte) {
		var r eventrec.Record
		n, err := eventrec.Parse(b, &r, eventrec.Limits{MaxString: 64})
		if err != nil {
			if !errors.Is(err, eventrec.ErrCorrupt) && !errors.Is(err, eventrec.ErrLimit) {
				t.Fatalf("error wraps neither ErrCorrupt nor ErrLimit: %v", err)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		var in eventrec.Interner
		got := tape.Event(&r, &in)
		if re := tape.AppendRecord(nil, got); !bytes.Equal(re, b[:n]) {
			t.Fatalf("accepted a record that is not canonical: %x re-encodes to %x", b[:n], re)
		}
		if h := r.AppendHeader(nil, b[:n]); !bytes.Equal(h, tape.AppendHeader(nil, got)) {
			t.Fatalf("header records differ")
		}
	})
}
