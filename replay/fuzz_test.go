package replay

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
	r := newReader(label, keep, Options{}, Options{}.newBudget())
	r.form = FormFile
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
	snap, err := MakeSnapshot(&small, 1, newTally())
	if err != nil {
		t.Fatal(err)
	}
	two := Run{ID: "s", Events: fuzzTape(1, 1), Error: "e"}
	withBlob := Run{ID: "r", Events: fuzzTape(1, BlobThreshold)}
	plain := &Bundle{Metadata: meta, Runs: []Run{small, two}}
	return []*Bundle{plain, {Metadata: meta, Runs: []Run{small}, Snapshot: snap}},
		[]*Bundle{plain, {Metadata: meta, Runs: []Run{withBlob}}}
}

// The first byte of a FuzzLoad input says what the rest is. Tar framing
// pads every entry to 512 bytes; mutating and minimising those zeros is
// time the fuzzer does not spend on the contents, so the inputs give the
// entries compactly and the harness builds the tar stream.
const (
	fuzzFile    = 'z' // a single-file bundle as it is on disk
	fuzzEntries = 'e' // tar entries (encodeEntries), in that order
	fuzzSealed  = 'm' // tar entries without manifest.json: the harness writes
	// a manifest that matches them, so mutations of the other files get past
	// their digests to the records
)

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
	m := Manifest{Format: Format}
	for i, n := range names {
		m.Files = append(m.Files, FileEntry{Path: n, Size: int64(len(datas[i])), Digest: events.Sum(datas[i])})
	}
	slices.SortFunc(m.Files, func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) })
	mb, err := m.encode()
	if err != nil {
		return names, datas
	}
	return append([]string{ManifestFile}, names...), append([][]byte{mb}, datas...)
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

// FuzzLoad feeds arbitrary bundles to the loader: single files as they
// are, and tar streams built from entries the fuzzer mutates (see
// fuzzEntries and fuzzSealed), so that mutations reach the manifest, the
// metadata and events.log's records. It must never panic; every error
// must be a *BundleError; Load and Verify must agree; whatever loads must
// write back to a bundle that loads to the same events. An execution
// takes well under a millisecond on small inputs, so a plain run fuzzes
// rather than minimises:
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 10m ./replay
func FuzzLoad(f *testing.F) {
	entries, files := fuzzSeeds(f)
	for _, b := range entries {
		names, datas := entriesOf(f, b)
		f.Add(append([]byte{fuzzEntries}, encodeEntries(names, datas)...))
		f.Add(append([]byte{fuzzSealed}, encodeEntries(names[1:], datas[1:])...)) // without the manifest
	}
	for _, b := range files {
		file, _ := encodeBundle(f, b)
		f.Add(append([]byte{fuzzFile}, file...))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw []byte
		tarOnly := true
		switch {
		case len(data) > 0 && data[0] == fuzzFile:
			raw, tarOnly = data[1:], false
		case len(data) > 0 && data[0] == fuzzEntries:
			raw = tarEntries(decodeEntries(data[1:]))
		case len(data) > 0 && data[0] == fuzzSealed:
			raw = tarEntries(sealEntries(decodeEntries(data[1:])))
		default:
			raw, tarOnly = data, !bytes.HasPrefix(data, zstdMagic)
		}
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
			if events.Chain(b.Runs[i].Events) != events.Chain(b2.Runs[i].Events) || !equalInfo(&b.Runs[i], &b2.Runs[i]) {
				t.Fatalf("round trip changed run %d", i)
			}
		}
	})
}
