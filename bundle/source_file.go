package bundle

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The single-file form: one zstd frame (frameReader) holding a tar stream
// whose entries come in a fixed order: manifest.json, metadata.json,
// runs.json, snapshot.json if any, the blobs sorted by name, events.log.

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxWindow is the zstd window the writer uses and the most the reader
// accepts, which bounds the reader's memory.
const maxWindow = 8 << 20

func newZstdReader(rd io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
}

// Decoders are pooled: building one costs more than reading a small
// bundle. A reset decoder decodes like a new one.
var decoders sync.Pool

func getZstdReader(rd io.Reader) (*zstd.Decoder, error) {
	if zr, ok := decoders.Get().(*zstd.Decoder); ok {
		if err := zr.Reset(rd); err == nil {
			return zr, nil
		}
		zr.Close()
	}
	return newZstdReader(rd)
}

func putZstdReader(zr *zstd.Decoder) {
	if zr.Reset(nil) == nil {
		decoders.Put(zr)
	}
}

// truncErr classifies a read error: an early end is errTruncated, a
// decoding error (zstd, tar) errMalformed; I/O errors and errors already
// classified pass through.
func truncErr(err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %v (the file ends early: copy or write it again)", errTruncated, err)
	case errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, errMalformed) || errors.Is(err, errTruncated) || errors.Is(err, errTooLarge) ||
		errors.Is(err, errUnsafeName) || errors.Is(err, errMissing) || errors.Is(err, errDigest):
		return err
	}
	return fmt.Errorf("%w: %v", errMalformed, err)
}

func (r *Reader) openFile() error {
	f, err := os.Open(r.path)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	r.src.closers = append(r.src.closers, f)
	return r.openStream(f)
}

// openStream reads a single-file bundle from rd.
func (r *Reader) openStream(rd io.Reader) error {
	fr, err := newFrameReader(bufio.NewReaderSize(rd, 64<<10))
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	r.src.frame = fr
	zr, err := getZstdReader(fr)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	r.src.closers = append(r.src.closers, closerFunc(func() error { putZstdReader(zr); return nil }))
	return r.openTar(zr)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// tarStream reads the entries of a single-file bundle in their fixed
// order.
type tarStream struct {
	tr  *tar.Reader
	hdr *tar.Header // the next entry, read but not consumed
	bad string      // the entry peek refused
}

// peek returns the next entry's header; want names what belongs there,
// for the error when the stream ends.
func (t *tarStream) peek(want string) (*tar.Header, error) {
	if t.hdr != nil {
		return t.hdr, nil
	}
	h, err := t.tr.Next()
	switch {
	case errors.Is(err, io.EOF):
		return nil, wrapf(errMissing, "the bundle ends before %s", want)
	case err != nil:
		return nil, truncErr(err)
	case h.Typeflag != tar.TypeReg:
		t.bad = h.Name
		return nil, wrapf(errUnsafeName, "entry %q is not a regular file (type %q): links and directories are not allowed", h.Name, h.Typeflag)
	}
	if err := checkName(h.Name); err != nil {
		t.bad = h.Name
		return nil, err
	}
	t.hdr = h
	return h, nil
}

// read consumes the next entry, which must be want, whole.
func (t *tarStream) read(want string, max int64) ([]byte, error) {
	h, err := t.peek(want)
	if err != nil {
		return nil, err
	}
	if h.Name != want {
		return nil, wrapf(errMalformed, "entry %q where %s belongs (entries are in a fixed order)", h.Name, want)
	}
	if h.Size > max {
		return nil, wrapf(errTooLarge, "%d bytes, at most %d", h.Size, max)
	}
	t.hdr = nil
	b := make([]byte, h.Size)
	if _, err := io.ReadFull(t.tr, b); err != nil {
		return nil, truncErr(err)
	}
	return b, nil
}

// name names the entry an error is about: the one refused or out of
// place, else want, what belongs there.
func (t *tarStream) name(want string) string {
	switch {
	case t.bad != "":
		return t.bad
	case t.hdr != nil:
		return t.hdr.Name
	}
	return want
}

func (r *Reader) openTar(rd io.Reader) error {
	t := &tarStream{tr: tar.NewReader(rd)}
	b, err := t.read(manifestFile, maxJSON)
	if err == nil {
		err = r.hdr.setManifest(b)
	}
	if err != nil {
		return r.fail(t.name(manifestFile), -1, "open", err)
	}
	r.blobs.manifest = r.hdr.manifest
	files := []struct {
		name string
		max  int64
		set  func([]byte) error
	}{{metadataFile, maxJSON, r.hdr.setMetadata}, {runsFile, maxJSON, r.hdr.setRuns}, {snapshotFile, maxSnapshot, r.hdr.setSnapshot}}
	for _, f := range files {
		if _, ok := r.hdr.manifest.file(f.name); !ok {
			continue
		}
		b, err := t.read(f.name, f.max)
		if err == nil {
			err = f.set(b)
		}
		if err != nil {
			return r.fail(t.name(f.name), -1, "open", err)
		}
	}
	if err := r.tarBlobs(t); err != nil {
		return err
	}
	e, _ := r.hdr.manifest.file(eventsFile)
	if t.hdr.Size != e.Size {
		return r.fail(eventsFile, -1, "open", wrapf(errDigest, "size %d, the manifest says %d", t.hdr.Size, e.Size))
	}
	t.hdr = nil
	return r.startLog(t.tr, e.Size, func() error { return r.tarEnd(t, rd) })
}

// tarBlobs reads the blobs, which come sorted before events.log: kept for
// a reader that hands out payloads, hashed as they pass for Verify. It
// stops with events.log's header read.
func (r *Reader) tarBlobs(t *tarStream) error {
	last := ""
	for {
		h, err := t.peek(eventsFile)
		if err != nil {
			return r.fail(t.name(eventsFile), -1, "open", err)
		}
		if h.Name == eventsFile {
			break
		}
		d, isBlob := blobDigest(h.Name)
		if !isBlob || h.Name <= last {
			return r.fail(h.Name, -1, "open", wrapf(errMalformed, "entry %q out of order (blobs come sorted after the metadata and before %s)", h.Name, eventsFile))
		}
		last = h.Name
		if err := r.tarBlob(t, h, d); err != nil {
			return r.fail(h.Name, -1, "open", err)
		}
	}
	for _, f := range r.hdr.manifest.Files {
		if d, ok := blobDigest(f.Path); ok && !r.blobs.verified[d] {
			return r.fail(f.Path, -1, "open", wrapf(errMissing, "listed in the manifest but absent"))
		}
	}
	return nil
}

func (r *Reader) tarBlob(t *tarStream, h *tar.Header, d [32]byte) error {
	e, ok := r.hdr.manifest.file(h.Name)
	if !ok {
		return wrapf(errUnsafeName, "present in the bundle but not listed in the manifest")
	}
	if h.Size > maxBlob {
		return wrapf(errTooLarge, "%d bytes, at most %d", h.Size, maxBlob)
	}
	if !r.keep {
		t.hdr = nil
		if err := checkStream(e, t.tr, h.Size); err != nil {
			return err
		}
		r.blobs.verified[d] = true
		return nil
	}
	if err := r.blobs.mem.take(h.Size); err != nil {
		return err
	}
	b, err := t.read(h.Name, maxBlob)
	if err != nil {
		return err
	}
	if err := checkBytes(e, b); err != nil {
		return err
	}
	r.blobs.kept[d], r.blobs.verified[d] = b, true
	return nil
}

// tarEnd runs after events.log: no entry may follow it, nothing may follow
// the end of the tar stream (its first byte is an error; nothing more is
// decompressed), and nothing may follow the zstd frame in the file.
// Reading to the end of the frame makes the decoder check its checksum.
func (r *Reader) tarEnd(t *tarStream, rd io.Reader) error {
	if h, err := t.tr.Next(); !errors.Is(err, io.EOF) {
		if err == nil {
			return r.fail(h.Name, -1, "verify", wrapf(errUnsafeName, "an entry follows %s", eventsFile))
		}
		return r.fail("", -1, "verify", truncErr(err))
	}
	var one [1]byte
	if n, err := io.ReadFull(rd, one[:]); n > 0 {
		return r.fail("", -1, "verify", wrapf(errMalformed, "data follows the end of the tar stream"))
	} else if !errors.Is(err, io.EOF) {
		return r.fail("", -1, "verify", truncErr(err))
	}
	if r.src.frame != nil {
		if err := r.src.frame.trailing(); err != nil {
			return r.fail("", -1, "verify", err)
		}
	}
	return nil
}
