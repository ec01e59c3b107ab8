package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/kr/pretty"

	"github.com/codegenie/codegenie/events"
)

// encodeBundle returns the single-file form of b and its tar stream.
func encodeBundle(t testing.TB, b *Bundle) (file, tarStream []byte) {
	t.Helper()
	file, tarStream, err := encodeBundleErr(b)
	if err != nil {
		t.Fatal(err)
	}
	return file, tarStream
}

func encodeBundleErr(b *Bundle) (file, tarStream []byte, err error) {
	p, err := makePlan(b)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := p.writeStream(&buf); err != nil {
		return nil, nil, err
	}
	zr, err := newZstdReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, nil, err
	}
	defer zr.Close()
	raw, err := io.ReadAll(zr)
	return buf.Bytes(), raw, err
}

// loadBytes loads a bundle from memory through the same Reader as Load.
func loadBytes(ctx context.Context, data []byte, tarOnly bool) (*Bundle, error) {
	r, err := openStreamBytes(ctx, "fuzz", data, tarOnly, true)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := &Bundle{Metadata: r.meta, Snapshot: r.snap}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		b.Events = append(b.Events, e)
	}
}

// verifyBytes is Verify for a bundle held in memory.
func verifyBytes(data []byte, tarOnly bool) error {
	r, err := openStreamBytes(context.Background(), "fuzz", data, tarOnly, false)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if err := r.step(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// FuzzLoad feeds arbitrary bytes to the bundle loader, both as a
// compressed single file and as its tar stream (so that mutations reach
// events.log's records, whose tar framing has no checksum). It must never
// panic; every error must be a *BundleError; Load and Verify must agree;
// whatever loads must write back
// to a bundle that loads to the same events.
//
//	go test -run '^$' -fuzz FuzzLoad -fuzztime 10m -fuzzminimizetime 100x ./replay
//
// (-fuzzminimizetime 100x: with the default 60s budget per new input the
// fuzzer spends nearly all its time minimizing.)
func FuzzLoad(f *testing.F) {
	evs := realisticRun(f, 0)
	snap, err := MakeSnapshot(evs, 3)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range []*Bundle{
		{Metadata: testMeta(), Events: evs},
		{Metadata: testMeta(), Events: evs, Snapshot: snap},
		{Metadata: testMeta(), Events: syntheticTape(f, 5, 40)},
	} {
		file, tarStream := encodeBundle(f, b)
		f.Add(file)
		f.Add(tarStream)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		tarOnly := !bytes.HasPrefix(data, zstdMagic)
		b, err := loadBytes(context.Background(), data, tarOnly)
		if verr := verifyBytes(data, tarOnly); (verr == nil) != (err == nil) {
			t.Fatalf("Load and Verify disagree: load: %v; verify: %v", err, verr)
		}
		if err != nil {
			var be *BundleError
			if !errors.As(err, &be) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		_, again := encodeBundle(t, b)
		b2, err := loadBytes(context.Background(), again, true)
		if err != nil {
			t.Fatalf("a loaded bundle does not write back: %v", err)
		}
		if events.Chain(b.Events) != events.Chain(b2.Events) {
			t.Fatalf("round trip changed the events")
		}
	})
}

// FuzzDecodeRecord checks the event record decoder (events.DecodeRecord)
// against the bundle's strict record scanner: neither may panic; whatever
// the scanner accepts, DecodeRecord decodes to an event that re-encodes to
// the same bytes; and a record DecodeRecord reads whose re-encoding is
// identical (the canonical form) within the size bounds, the scanner
// accepts.
//
//	go test -run '^$' -fuzz FuzzDecodeRecord -fuzztime 10m ./replay
func FuzzDecodeRecord(f *testing.F) {
	for _, e := range realisticRun(f, 0) {
		f.Add(events.AppendRecord(nil, e))
	}
	for _, e := range syntheticTape(f, 3, 10) {
		f.Add(events.AppendRecord(nil, e))
	}
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, n, derr := events.DecodeRecord(data)
		var r rec
		serr := scanRecord(data, &r)
		if derr != nil {
			if !errors.Is(derr, events.ErrCorruptRecord) {
				t.Fatalf("DecodeRecord error does not wrap ErrCorruptRecord: %v", derr)
			}
			if serr == nil {
				t.Fatalf("scanner accepts what DecodeRecord rejects (%v)", derr)
			}
			return
		}
		canonical := n == len(data) && bytes.Equal(events.AppendRecord(nil, e), data)
		if serr == nil {
			if !canonical {
				t.Fatalf("scanner accepts a non-canonical record")
			}
			if r.seq != e.Seq || r.parent != e.Parent || string(r.kind) != string(e.Kind) || string(r.lane) != e.Lane ||
				!bytes.Equal(r.payload, e.Payload) || r.digest != e.PayloadDigest {
				t.Fatalf("scanner and DecodeRecord disagree")
			}
			// The validator decodes from its scan (the record is parsed
			// once): it must give exactly DecodeRecord's event.
			if got := r.event(); !reflect.DeepEqual(got, e) {
				t.Fatalf("rec.event and DecodeRecord disagree: %v", pretty.Diff(e, got))
			}
			return
		}
		if canonical && !errors.Is(serr, ErrTooLarge) {
			t.Fatalf("scanner rejects a canonical record: %v", serr)
		}
	})
}
