package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

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

// openStreamBytes opens a single-file bundle held in memory; label names
// it in errors. With tarOnly the bytes are the tar stream, not compressed.
func openStreamBytes(ctx context.Context, label string, b []byte, tarOnly, keep bool) (*Reader, error) {
	r := newReader(label, keep, Config{}, Config{}.newBudget())
	r.form = formFile
	r.watch(ctx)
	var err error
	if tarOnly {
		err = r.openTar(bytes.NewReader(b))
	} else {
		err = r.openStream(bytes.NewReader(b))
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// loadBytes loads a bundle from memory through the same Reader as Load.
func loadBytes(ctx context.Context, data []byte, tarOnly bool) (*Bundle, error) {
	r, err := openStreamBytes(ctx, "fuzz", data, tarOnly, true)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readBundle(r)
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

// tarOf returns the tar stream of b's single-file form (no compression).
func tarOf(t testing.TB, b *Bundle) []byte {
	t.Helper()
	p, err := makePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.writeTar(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fuzzTape returns n events with p-byte payloads and nothing else set:
// the smallest tapes that exercise the log.
func fuzzTape(n, p int) []events.Event {
	evs := make([]events.Event, n)
	for i := range evs {
		pl := bytes.Repeat([]byte{byte('a' + i)}, p)
		evs[i] = events.Event{Seq: uint64(i + 1), Parent: uint64(i), Kind: "k", Payload: pl, PayloadDigest: events.Sum(pl)}
	}
	return evs
}

// fuzzSeeds are the smallest bundles that cover inline payloads, a
// snapshot and a blob. Small matters: the fuzzer minimises every new input
// it finds, in time that grows with the square of the input's length.
func fuzzSeeds(t testing.TB) (entries, files []*Bundle) {
	t.Helper()
	meta := Metadata{Scenario: "s"}
	small := Run{ID: "r", Events: fuzzTape(2, 3), Output: []byte("o")}
	snap, err := small.Snapshot(1, newTally())
	if err != nil {
		t.Fatal(err)
	}
	two := Run{ID: "s", Events: fuzzTape(1, 1), Error: "e"}
	withBlob := Run{ID: "r", Events: fuzzTape(1, blobThreshold)}
	plain := &Bundle{Metadata: meta, Runs: []Run{small, two}}
	return []*Bundle{plain, {Metadata: meta, Runs: []Run{small}, Snapshot: snap}},
		[]*Bundle{plain, {Metadata: meta, Runs: []Run{withBlob}}}
}

// The encodings of a FuzzLoad base: what the loader reads after the
// harness expands it.
const (
	fuzzFile    = 'z' // a single-file bundle as it is on disk
	fuzzEntries = 'e' // tar entries (encodeEntries), in that order: the
	// harness builds the tar stream, whose 512-byte padding is not worth
	// mutating
	fuzzSealed = 'm' // tar entries without manifest.json: the harness writes
	// a manifest that matches them, so edits of the other files get past
	// their digests to the records
)

// fuzzBase is a bundle FuzzLoad edits, in one encoding.
type fuzzBase struct {
	mode byte
	data []byte
}

// fuzzBases encodes the seed bundles every way FuzzLoad reads them.
func fuzzBases(t testing.TB) []fuzzBase {
	t.Helper()
	var bases []fuzzBase
	entries, files := fuzzSeeds(t)
	for _, b := range entries {
		names, datas := entriesOf(t, b)
		bases = append(bases, fuzzBase{fuzzEntries, encodeEntries(names, datas)}, fuzzBase{fuzzSealed, encodeEntries(names[1:], datas[1:])})
	}
	for _, b := range files {
		file, _ := encodeBundle(t, b)
		bases = append(bases, fuzzBase{fuzzFile, file})
	}
	return bases
}

// applyEdits applies an edit script to a copy of base. The script is a
// sequence of edits, each an op byte, a uvarint offset (modulo the length)
// and, for overwrite and insert, a length byte and that many bytes:
// overwrite, insert, delete (length byte, no bytes), truncate. Short
// scripts reach every byte of the base, so the fuzzer's inputs stay a few
// bytes long however large the bundle: the fuzzer minimises each new
// input in time that grows with the square of its length.
func applyEdits(base, script []byte) []byte {
	out := bytes.Clone(base)
	for len(script) > 0 {
		op := script[0] % 4
		off, n := binary.Uvarint(script[1:])
		if n <= 0 {
			break
		}
		script = script[1+n:]
		at := int(off % uint64(len(out)+1))
		k := 0
		if op != 3 && len(script) > 0 {
			k, script = int(script[0]%32)+1, script[1:]
		}
		switch op {
		case 0: // overwrite
			k = min(k, len(script), len(out)-at)
			copy(out[at:], script[:k])
			script = script[k:]
		case 1: // insert
			k = min(k, len(script))
			out = slices.Insert(out, at, script[:k]...)
			script = script[k:]
		case 2: // delete
			out = slices.Delete(out, at, min(at+k, len(out)))
		case 3: // truncate
			out = out[:at]
		}
	}
	return out
}

// encodeEntries encodes (name, data) pairs as uvarint-length-prefixed
// strings.
func encodeEntries(names []string, datas [][]byte) []byte {
	var out []byte
	for i := range names {
		out = binary.AppendUvarint(out, uint64(len(names[i])))
		out = append(out, names[i]...)
		out = binary.AppendUvarint(out, uint64(len(datas[i])))
		out = append(out, datas[i]...)
	}
	return out
}

// decodeEntries decodes what encodeEntries encodes, as far as it can.
func decodeEntries(b []byte) (names []string, datas [][]byte) {
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, true
	}
	for len(b) > 0 {
		name, ok1 := next()
		data, ok2 := next()
		if !ok1 || !ok2 {
			break
		}
		names, datas = append(names, string(name)), append(datas, data)
	}
	return names, datas
}

// tarEntries writes the entries as the single-file form's tar stream does.
func tarEntries(names []string, datas [][]byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range names {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: names[i], Size: int64(len(datas[i])), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
		if tw.WriteHeader(hdr) != nil {
			return buf.Bytes()
		}
		tw.Write(datas[i])
	}
	tw.Close()
	return buf.Bytes()
}

// sealEntries puts a manifest that matches the entries (every file's size
// and digest) in front of them.
func sealEntries(names []string, datas [][]byte) ([]string, [][]byte) {
	m := bundleManifest{Format: bundleFormat}
	for i, n := range names {
		m.Files = append(m.Files, fileEntry{Path: n, Size: int64(len(datas[i])), Digest: events.Sum(datas[i])})
	}
	slices.SortFunc(m.Files, func(a, b fileEntry) int { return strings.Compare(a.Path, b.Path) })
	mb, err := m.encode()
	if err != nil {
		return names, datas
	}
	return append([]string{manifestFile}, names...), append([][]byte{mb}, datas...)
}

// entriesOf returns the entries of b's tar stream.
func entriesOf(t testing.TB, b *Bundle) (names []string, datas [][]byte) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(tarOf(t, b)))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, datas
		}
		if err != nil {
			t.Fatal(err)
		}
		d, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names, datas = append(names, h.Name), append(datas, d)
	}
}

// FuzzLoad feeds edited bundles to the loader. An input is an edit
// script (applyEdits) over one of the seed bundles (its first byte picks
// which, and in which encoding: a single file, tar entries, or tar entries
// the harness seals with a matching manifest, so that edits reach the
// metadata, runs and records past their digests). It must never panic;
// every error must be a *BundleError; Load and Verify must agree; whatever
// loads must write back to a bundle that loads to the same runs. Inputs
// stay a few bytes long, so a plain run fuzzes rather than minimises:
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 10m ./bundle
func FuzzLoad(f *testing.F) {
	bases := fuzzBases(f)
	for i := range bases {
		f.Add([]byte{byte(i)})
		f.Add([]byte{byte(i), 0, 40, 0, 'x'}) // overwrite a byte early on
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) == 0 {
			return
		}
		b := bases[int(script[0])%len(bases)]
		data := applyEdits(b.data, script[1:])
		var raw []byte
		tarOnly := true
		switch b.mode {
		case fuzzFile:
			raw, tarOnly = data, false
		case fuzzEntries:
			raw = tarEntries(decodeEntries(data))
		case fuzzSealed:
			raw = tarEntries(sealEntries(decodeEntries(data)))
		}
		fuzzOne(t, raw, tarOnly)
	})
}

// fuzzOne checks one bundle (a single file, or its tar stream when
// tarOnly).
func fuzzOne(t *testing.T, raw []byte, tarOnly bool) {
	b, err := loadBytes(context.Background(), raw, tarOnly)
	if verr := verifyBytes(raw, tarOnly); (verr == nil) != (err == nil) {
		t.Fatalf("Load and Verify disagree: load: %v; verify: %v", err, verr)
	}
	if err != nil {
		var be *BundleError
		if !errors.As(err, &be) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		return
	}
	b2, err := loadBytes(context.Background(), tarOf(t, b), true)
	if err != nil {
		t.Fatalf("a loaded bundle does not write back: %v", err)
	}
	if len(b.Runs) != len(b2.Runs) {
		t.Fatalf("round trip changed the runs")
	}
	for i := range b.Runs {
		if events.Chain(b.Runs[i].Events, 0) != events.Chain(b2.Runs[i].Events, 0) || !equalInfo(&b.Runs[i], &b2.Runs[i]) {
			t.Fatalf("round trip changed run %d", i)
		}
	}
}
